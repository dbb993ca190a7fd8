package strictjson

// LoneSurrogate returns the first \u escape of raw (the bytes of one JSON
// string, quotes included) that encodes half of a UTF-16 surrogate pair
// without the other half. JSON decoders turn such an escape into U+FFFD,
// silently changing the text (a path "a\ud800.go" would become "a�.go"),
// so documents holding one are refused like invalid UTF-8.
func LoneSurrogate(raw []byte) (string, bool) {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped character: a "\\" pair is skipped whole
		if i >= len(raw) || raw[i] != 'u' {
			continue
		}
		r, ok := hex4(raw[i+1:])
		if !ok {
			continue // not a valid escape: the decoder refuses it
		}
		esc := string(raw[i-1 : i+5])
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return esc, true
		case r >= 0xD800 && r <= 0xDBFF:
			next := raw[i+1:]
			if len(next) >= 6 && next[0] == '\\' && next[1] == 'u' {
				if lo, ok := hex4(next[2:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return esc, true
		}
	}
	return "", false
}

// hex4 decodes four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
