package patch

import (
	"errors"

	"github.com/orchdev/orch/internal/safepath"
)

// entry turns a file's header lines into a Entry: the names given by
// the different header lines must agree, and every name must be safe.
func (h *fileHeader) entry() (Entry, error) {
	var oldName, newName string
	agree := func(dst *string, raw, prefix, what string) error {
		if raw == "" || raw == devNull {
			return nil
		}
		name := raw
		if prefix != "" {
			var err error
			if name, err = stripPrefix(raw, prefix); err != nil {
				return &Error{Reason: "in the " + what + " name", Err: err}
			}
		}
		if err := safepath.Check(name); err != nil {
			return &Error{Reason: "in the " + what + " name", Err: err}
		}
		if *dst != "" && *dst != name {
			return &Error{Reason: "inconsistent file names " + safepath.Quote(*dst) + " and " + safepath.Quote(name) + " (" + what + ")"}
		}
		*dst = name
		return nil
	}
	if h.git && h.gitNamesOK {
		if err := agree(&oldName, h.gitA, "a/", "diff --git"); err != nil {
			return Entry{}, err
		}
		if err := agree(&newName, h.gitB, "b/", "diff --git"); err != nil {
			return Entry{}, err
		}
	}
	steps := []struct {
		dst         *string
		raw, prefix string
		what        string
	}{
		{&oldName, h.minus, "a/", "---"},
		{&newName, h.plus, "b/", "+++"},
		{&oldName, h.renameFrom, "", "rename from"},
		{&newName, h.renameTo, "", "rename to"},
		{&oldName, h.copyFrom, "", "copy from"},
		{&newName, h.copyTo, "", "copy to"},
	}
	for _, s := range steps {
		if err := agree(s.dst, s.raw, s.prefix, s.what); err != nil {
			return Entry{}, err
		}
	}
	if h.oldMode != "" && h.newMode == "" {
		return Entry{}, &Error{Line: h.oldModeLine, Reason: "\"old mode\" without \"new mode\": mode changes are not allowed"}
	}
	creates := h.newFile || h.minus == devNull
	deletes := h.deletedFile || h.plus == devNull
	switch {
	case creates && deletes:
		return Entry{}, errors.New("the file is both created and deleted")
	case h.newFile && h.haveMinus && h.minus != devNull:
		return Entry{}, errors.New("a new file must have \"--- /dev/null\"")
	case h.deletedFile && h.havePlus && h.plus != devNull:
		return Entry{}, errors.New("a deleted file must have \"+++ /dev/null\"")
	case (creates || deletes) && (h.renameFrom != "" || h.renameTo != "" || h.copyFrom != "" || h.copyTo != ""):
		return Entry{}, errors.New("a created or deleted file cannot also be renamed or copied")
	case (h.renameFrom != "") != (h.renameTo != ""):
		return Entry{}, errors.New("\"rename from\" and \"rename to\" must come together")
	case (h.copyFrom != "") != (h.copyTo != ""):
		return Entry{}, errors.New("\"copy from\" and \"copy to\" must come together")
	case h.renameFrom != "" && h.copyFrom != "":
		return Entry{}, errors.New("a file cannot be both renamed and copied")
	}
	switch {
	case creates:
		if newName == "" {
			return Entry{}, errors.New("cannot tell the name of the created file")
		}
		return Entry{NewPath: newName, Op: OpCreate}, nil
	case deletes:
		if oldName == "" {
			return Entry{}, errors.New("cannot tell the name of the deleted file")
		}
		return Entry{OldPath: oldName, Op: OpDelete}, nil
	case oldName == "" || newName == "":
		return Entry{}, errors.New("cannot tell the file names apart (quote names holding \" b/\")")
	case h.copyTo != "":
		// A copy leaves its source alone and creates the destination.
		return Entry{NewPath: newName, Op: OpCreate}, nil
	case h.renameFrom != "" && oldName == newName:
		return Entry{}, errors.New("\"rename from\" and \"rename to\" name the same file")
	case h.renameFrom != "" || oldName != newName:
		return Entry{OldPath: oldName, NewPath: newName, Op: OpRename}, nil
	}
	return Entry{OldPath: oldName, NewPath: newName, Op: OpUpdate}, nil
}
