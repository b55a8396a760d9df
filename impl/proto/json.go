package proto

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Low-level JSON helpers shared by the decoder and the encoders. They work on byte
// slices that the caller has already checked to be valid UTF-8.

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

func hexVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// hex4 reads 4 hex digits at b[i:], or returns -1.
func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for j := 0; j < 4; j++ {
		h := hexVal(b[i+j])
		if h < 0 {
			return -1
		}
		r = r<<4 | rune(h)
	}
	return r
}

// scanString checks the JSON string starting with the quote at b[i] and returns the
// index just past its closing quote and whether it contains an escape. It returns
// end -1 on a syntax error: a control character, a bad escape, an escaped lone
// surrogate, or no closing quote.
func scanString(b []byte, i int) (end int, escaped bool) {
	i++ // opening quote
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, escaped
		case c < 0x20:
			return -1, escaped
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return -1, escaped
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				r := hex4(b, i+2)
				if r < 0 {
					return -1, escaped
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r >= 0xDC00 || i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
						return -1, escaped
					}
					r2 := hex4(b, i+2)
					if r2 < 0xDC00 || r2 > 0xDFFF {
						return -1, escaped
					}
					i += 6
				}
			default:
				return -1, escaped
			}
		default:
			i++
		}
	}
	return -1, escaped
}

// unescape appends the decoded content of the valid JSON string s (with its quotes)
// to dst.
func unescape(dst, s []byte) []byte {
	s = s[1 : len(s)-1]
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		switch s[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(s, i+2)
			if utf16.IsSurrogate(r) {
				r = utf16.DecodeRune(r, hex4(s, i+8))
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			i += 6
			continue
		default: // '"', '\\', '/'
			dst = append(dst, s[i+1])
		}
		i += 2
	}
	return dst
}

// unescapedEqual reports whether the valid JSON string literal lit (with quotes)
// decodes to name. It does not allocate. It is small enough to be inlined in the
// decoder's name lookups; a literal with an escape goes to escapedEqual.
func unescapedEqual(lit []byte, escaped bool, name string) bool {
	if escaped {
		return escapedEqual(lit, name)
	}
	return string(lit[1:len(lit)-1]) == name
}

// escapedEqual is unescapedEqual for a literal with an escape.
func escapedEqual(lit []byte, name string) bool {
	var buf [64]byte
	if len(lit) > 6*len(name)+2 { // no escape makes a byte from more than 6
		return false
	}
	return string(unescape(buf[:0], lit)) == name
}

// scanNumber checks the JSON number at b[i] and returns the index past it and whether
// it is an integer literal (no fraction, no exponent); end is -1 on a syntax error.
func scanNumber(b []byte, i int) (end int, integer bool) {
	integer = true
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return -1, false
	}
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return -1, false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return -1, false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	return i, integer
}

// scanLiteral checks the literal true, false or null at b[i] (whose first byte is
// 't', 'f' or 'n') and returns the index past it, or -1.
func scanLiteral(b []byte, i int) int {
	lit := "null"
	if b[i] == 't' {
		lit = "true"
	} else if b[i] == 'f' {
		lit = "false"
	}
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// parseInt reads the valid integer literal lit. ok is false if |value| > IntMax.
func parseInt(lit []byte) (v int64, ok bool) {
	neg := false
	if lit[0] == '-' {
		neg, lit = true, lit[1:]
	}
	for _, c := range lit {
		v = v*10 + int64(c-'0')
		if v > IntMax {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// skipValue returns the index past the valid JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := scanString(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _ = scanString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && !isDelim(b[i]) {
		i++
	}
	return i
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ':' || isWS(c)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Quotes, backslashes and control characters
// are escaped; invalid UTF-8 becomes U+FFFD (so the output is always valid).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\\ufffd"...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func utf8ValidString(s string) bool { return utf8.ValidString(s) }
