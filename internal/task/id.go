package task

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// idRule is the task id rule as shown to users.
const idRule = "^[a-z0-9][a-z0-9._-]{0,63}$, not . or .."

// ValidID checks a task id against the rule of docs/artifacts.md (idRule). The
// error wraps ErrBadID and quotes both the id and the rule.
func ValidID(id string) error {
	ok := len(id) >= 1 && len(id) <= 64 && id != "." && id != ".." && isIDStart(id[0])
	for i := 1; ok && i < len(id); i++ {
		c := id[i]
		ok = isIDStart(c) || c == '.' || c == '_' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%w %q: a task id must match %s", ErrBadID, id, idRule)
	}
	return nil
}

func isIDStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// maxSlug is the longest slug NewID derives from a brief.
const maxSlug = 40

// NewID proposes an id "NNNN-slug" for a new task: NNNN is one more than the
// highest numeric prefix among existing task folders (at least 4 digits,
// zero padded) and slug is made of up to five lowercase words of the brief
// (letters a-z and digits, joined by '-', at most 40 characters; "task" when
// the brief has none). Two concurrent callers may get the same id; the
// second CreateTask then fails with ErrExists.
func (p *Project) NewID(brief string) (string, error) {
	entries, err := os.ReadDir(p.TasksDir())
	if err != nil {
		return "", fmt.Errorf("read tasks folder: %w", err)
	}
	var highest uint64
	for _, e := range entries {
		if n, ok := numericPrefix(e.Name()); ok && n > highest {
			highest = n
		}
	}
	id := fmt.Sprintf("%04d-%s", highest+1, Slug(brief))
	if err := ValidID(id); err != nil {
		return "", fmt.Errorf("derive task id from brief: %w", err)
	}
	return id, nil
}

// numericPrefix parses the leading digits of a task folder name, when they
// are followed by '-', '.', '_' or nothing.
func numericPrefix(name string) (uint64, bool) {
	i := 0
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	if i == 0 || i < len(name) && !strings.ContainsRune("-._", rune(name[i])) {
		return 0, false
	}
	n, err := strconv.ParseUint(name[:i], 10, 64)
	if err != nil || n > 1<<53 {
		return 0, false
	}
	return n, true
}

// Slug turns a brief into at most five lowercase words of [a-z0-9] joined by
// '-', at most 40 characters, "task" when nothing is left.
func Slug(brief string) string {
	words := strings.FieldsFunc(strings.ToLower(brief), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	var b strings.Builder
	for i, w := range words {
		if i == 5 {
			break
		}
		sep := 0
		if b.Len() > 0 {
			sep = 1
		}
		if b.Len()+sep+len(w) > maxSlug {
			if b.Len() == 0 {
				b.WriteString(w[:maxSlug])
			}
			break
		}
		if sep == 1 {
			b.WriteByte('-')
		}
		b.WriteString(w)
	}
	if b.Len() == 0 {
		return "task"
	}
	return b.String()
}
