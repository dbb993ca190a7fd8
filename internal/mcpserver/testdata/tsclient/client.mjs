// The official TypeScript MCP SDK's stdio client against `orch mcp`: run by
// internal/mcpserver's TestTypeScriptClient with ORCH_BIN (the built orch)
// and ORCH_PROJECT (a project made by the test). Prints one JSON object
// with what it saw; the Go test checks it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

const transport = new StdioClientTransport({
  command: process.env.ORCH_BIN,
  args: ["mcp"],
  cwd: process.env.ORCH_PROJECT,
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
await client.connect(transport);

const textOf = (r) => r.content.map((c) => c.text ?? "").join("");
const out = { server: client.getServerVersion() };
const tools = await client.listTools();
out.tools = tools.tools.map((t) => t.name).sort();
out.schemas = Object.fromEntries(tools.tools.map((t) => [t.name, t.inputSchema]));
out.outputSchemas = Object.fromEntries(tools.tools.map((t) => [t.name, t.outputSchema ?? null]));
out.annotations = Object.fromEntries(tools.tools.map((t) => [t.name, t.annotations ?? null]));

out.created = (await client.callTool({ name: "new_task", arguments: { brief: "add a flag, from TypeScript", id: "ts1" } })).structuredContent;
out.status = (await client.callTool({ name: "status", arguments: { task: "ts1" } })).structuredContent;

// A read-only tool's structured output checked against the output schema
// it listed, with the SDK's own validator (callTool checks it too); and
// the same output with a phase that does not exist, which must fail.
const validate = new AjvJsonSchemaValidator().getValidator(tools.tools.find((t) => t.name === "status").outputSchema);
const checked = validate(out.status);
const tampered = validate({ ...out.status, phase: "shipping" });
out.statusValid = { valid: checked.valid, error: checked.errorMessage ?? "", tamperedValid: tampered.valid, tamperedError: tampered.errorMessage ?? "" };

const bad = await client.callTool({
  name: "write_artifact",
  arguments: { task: "ts1", path: "planning/planning.ai.json", content: '{"id": "ts1", "title": ""}' },
});
out.bad = { isError: bad.isError === true, text: textOf(bad) };

const plan = JSON.stringify({
  id: "ts1", title: "Add a flag", brief: "add a flag",
  file_plan: [{ path: "main.go", intent: "update", summary: "the flag" }],
});
const good = await client.callTool({ name: "write_artifact", arguments: { task: "ts1", path: "planning/planning.ai.json", content: plan } });
out.good = good.structuredContent;
out.next = (await client.callTool({ name: "next", arguments: { task: "ts1", from: "planning" } })).structuredContent;

const refused = await client.callTool({ name: "next", arguments: { task: "ts1", from: "planning" } });
out.refused = { isError: refused.isError === true, text: textOf(refused) };

let unknown;
try {
  unknown = await client.callTool({ name: "accept", arguments: { task: "ts1", verdict: "accepted", reasons: ["lgtm"] } });
  out.accept = { isError: unknown.isError === true, text: textOf(unknown) };
} catch (e) {
  out.accept = { thrown: String(e) };
}

out.resources = (await client.listResources()).resources.map((r) => r.uri).sort();
out.brief = (await client.readResource({ uri: "orch://task/ts1/planning/brief.md" })).contents[0].text;
out.log = (await client.callTool({ name: "log", arguments: { task: "ts1" } })).structuredContent.events.map((e) => e.kind + (e.client ? ":" + e.client : ""));

await client.close();
// Exit once the output is written: the SDK leaves handles that keep node
// alive for seconds after close.
process.stdout.write(JSON.stringify(out) + "\n", () => process.exit(0));
