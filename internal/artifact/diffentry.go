package artifact

import "errors"

// entry turns a file's header lines into a DiffEntry: the names given by
// the different header lines must agree, and every name must be safe.
func (h *fileHeader) entry() (DiffEntry, error) {
	var oldName, newName string
	agree := func(dst *string, raw, prefix, what string) error {
		if raw == "" || raw == devNull {
			return nil
		}
		name := raw
		if prefix != "" {
			var err error
			if name, err = stripPrefix(raw, prefix); err != nil {
				return &DiffError{Reason: "in the " + what + " name", Err: err}
			}
		}
		if err := CheckPath(name); err != nil {
			return &DiffError{Reason: "in the " + what + " name", Err: err}
		}
		if *dst != "" && *dst != name {
			return &DiffError{Reason: "inconsistent file names " + quotePath(*dst) + " and " + quotePath(name) + " (" + what + ")"}
		}
		*dst = name
		return nil
	}
	if h.git && h.gitNamesOK {
		if err := agree(&oldName, h.gitA, "a/", "diff --git"); err != nil {
			return DiffEntry{}, err
		}
		if err := agree(&newName, h.gitB, "b/", "diff --git"); err != nil {
			return DiffEntry{}, err
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
			return DiffEntry{}, err
		}
	}
	if h.oldMode != "" && h.newMode == "" {
		return DiffEntry{}, &DiffError{Line: h.oldModeLine, Reason: "\"old mode\" without \"new mode\": mode changes are not allowed"}
	}
	creates := h.newFile || h.minus == devNull
	deletes := h.deletedFile || h.plus == devNull
	switch {
	case creates && deletes:
		return DiffEntry{}, errors.New("the file is both created and deleted")
	case h.newFile && h.haveMinus && h.minus != devNull:
		return DiffEntry{}, errors.New("a new file must have \"--- /dev/null\"")
	case h.deletedFile && h.havePlus && h.plus != devNull:
		return DiffEntry{}, errors.New("a deleted file must have \"+++ /dev/null\"")
	case (creates || deletes) && (h.renameFrom != "" || h.renameTo != "" || h.copyFrom != "" || h.copyTo != ""):
		return DiffEntry{}, errors.New("a created or deleted file cannot also be renamed or copied")
	case (h.renameFrom != "") != (h.renameTo != ""):
		return DiffEntry{}, errors.New("\"rename from\" and \"rename to\" must come together")
	case (h.copyFrom != "") != (h.copyTo != ""):
		return DiffEntry{}, errors.New("\"copy from\" and \"copy to\" must come together")
	case h.renameFrom != "" && h.copyFrom != "":
		return DiffEntry{}, errors.New("a file cannot be both renamed and copied")
	}
	switch {
	case creates:
		if newName == "" {
			return DiffEntry{}, errors.New("cannot tell the name of the created file")
		}
		return DiffEntry{NewPath: newName, Op: OpCreate}, nil
	case deletes:
		if oldName == "" {
			return DiffEntry{}, errors.New("cannot tell the name of the deleted file")
		}
		return DiffEntry{OldPath: oldName, Op: OpDelete}, nil
	case oldName == "" || newName == "":
		return DiffEntry{}, errors.New("cannot tell the file names apart (quote names holding \" b/\")")
	case h.copyTo != "":
		// A copy leaves its source alone and creates the destination.
		return DiffEntry{NewPath: newName, Op: OpCreate}, nil
	case h.renameFrom != "" || oldName != newName:
		return DiffEntry{OldPath: oldName, NewPath: newName, Op: OpRename}, nil
	}
	return DiffEntry{OldPath: oldName, NewPath: newName, Op: OpUpdate}, nil
}
