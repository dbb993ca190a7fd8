// orch board: live updates. Hand-written, no dependency. Text from the
// server is only ever put into the page as text (textContent) or as the
// server's own escaped HTML (a fetched copy of this page).
"use strict";
(function () {
  const task = document.body.dataset.task || "";
  const live = document.getElementById("live");
  // A refused action answers with the task page itself (409, the state as
  // it is now): its address becomes the task's, so that a reload shows
  // the task instead of posting the form again and the live updates
  // fetch the page.
  if (task && location.pathname !== "/task/" + encodeURIComponent(task)) {
    history.replaceState(null, "", "/task/" + encodeURIComponent(task) + "#actions");
  }
  let refreshing = false, again = false;

  // A form someone is filling in is never replaced under their hands.
  function typing() {
    const a = document.activeElement;
    if (a && (a.tagName === "TEXTAREA" || a.tagName === "INPUT" && a.type === "text")) return true;
    for (const el of document.querySelectorAll("main textarea, main input[type=text]")) {
      if (el.value.trim() !== "") return true;
    }
    return false;
  }

  // refresh fetches this page again and swaps its <main>, keeping the
  // outcome of the last action on screen.
  async function refresh() {
    if (refreshing) { again = true; return; }
    if (task && typing()) { document.getElementById("stale").hidden = false; return; }
    refreshing = true;
    try {
      const res = await fetch(location.pathname, { credentials: "same-origin", cache: "no-store" });
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      const next = doc.getElementById("main"), cur = document.getElementById("main");
      if (!next || !cur) return;
      // The notice that a job started is not kept: the job's box says
      // how it went (a failed run shows only its errors).
      const flash = document.getElementById("flash");
      if (flash && !doc.getElementById("flash") && flash.dataset.started !== "yes") {
        const actions = next.querySelector("#actions h2");
        if (actions) actions.after(document.adoptNode(flash));
      }
      const y = window.scrollY;
      cur.replaceWith(document.adoptNode(next));
      window.scrollTo(0, y);
      document.title = doc.title;
      document.body.dataset.stamp = doc.body.dataset.stamp || "";
      wire();
    } finally {
      refreshing = false;
      if (again) { again = false; refresh(); }
    }
  }

  // job shows a phase run's progress lines as they come.
  function job(st) {
    let box = document.getElementById("job");
    if (!box || box.dataset.job !== st.id) { refresh(); return; }
    const log = document.getElementById("job-log");
    if (log && st.lines) {
      const have = log.dataset.lines ? parseInt(log.dataset.lines, 10) : null;
      if (have === null || st.from === 0) log.textContent = "";
      log.textContent += st.lines.map(l => l + "\n").join("");
      log.dataset.lines = String(st.from + st.lines.length);
      log.scrollTop = log.scrollHeight;
    }
    const status = document.getElementById("job-status");
    if (status) status.textContent = st.done ? (st.error ? "failed" : "finished") : "running";
    const el = document.getElementById("job-elapsed");
    if (el) el.textContent = st.elapsed;
    if (st.done) refresh();
  }

  function wire() {
    // The changes-requested target only matters with that verdict.
    const target = document.getElementById("accept-target");
    if (target) {
      const form = target.form;
      const sync = () => { target.disabled = form.verdict.value !== "changes_requested"; };
      form.addEventListener("change", sync);
      sync();
    }
  }

  function connect() {
    const es = new EventSource("/events" + (task ? "?task=" + encodeURIComponent(task) : ""));
    es.addEventListener("open", () => { live.textContent = "live"; live.className = "live on"; });
    // Whatever changed between this page's reading and now (also after
    // a reconnection): the stamps differ.
    es.addEventListener("hello", (e) => {
      if (String(JSON.parse(e.data).stamp) !== document.body.dataset.stamp) refresh();
    });
    es.addEventListener("error", () => { live.textContent = "reconnecting…"; live.className = "live off"; });
    es.addEventListener("change", () => refresh());
    es.addEventListener("job", (e) => job(JSON.parse(e.data)));
  }

  wire();
  connect();
})();
