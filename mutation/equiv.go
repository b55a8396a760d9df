package mutation

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// ErrArchive is returned when a compiled package archive cannot be read.
var ErrArchive = errors.New("soundgate/mutation: unreadable package archive")

// objMagic starts the binary part of a Go object file (cmd/internal/goobj); the
// 8-byte fingerprint of the export data follows it.
var objMagic = []byte("\x00go120ld")

var buildIDLine = regexp.MustCompile(`build id "[^"]*"`)

// objectCode returns the machine-code member (_go_.o) of a package archive with the
// parts that depend on the source text rather than on the compiled code cleared: the
// build id (a hash of the inputs) and the export-data fingerprint. The export data
// itself (__.PKGDEF) is left out: it holds inlinable bodies as syntax, so `x * 1`
// and `x / 1` differ there although they compile to the same code. That is why the
// comparison is only trusted for changes inside function bodies (Mutant.inBody):
// a constant's value lives in the export data and the object alone would miss it.
func objectCode(archive []byte) ([]byte, error) {
	const hdrLen = 60
	if !bytes.HasPrefix(archive, []byte("!<arch>\n")) {
		return nil, fmt.Errorf("%w: no archive header", ErrArchive)
	}
	rest := archive[8:]
	for len(rest) >= hdrLen {
		name := string(bytes.TrimSpace(rest[:16]))
		size, err := strconv.Atoi(string(bytes.TrimSpace(rest[48:58])))
		if err != nil || size < 0 || hdrLen+size > len(rest) {
			return nil, fmt.Errorf("%w: bad member header", ErrArchive)
		}
		data := rest[hdrLen : hdrLen+size]
		if name == "_go_.o" {
			obj := buildIDLine.ReplaceAll(data, []byte(`build id ""`))
			if i := bytes.Index(obj, objMagic); i >= 0 && i+len(objMagic)+8 <= len(obj) {
				obj = append([]byte(nil), obj...)
				clear(obj[i+len(objMagic) : i+len(objMagic)+8])
			}
			return obj, nil
		}
		rest = rest[hdrLen+size:]
		if size%2 == 1 && len(rest) > 0 {
			rest = rest[1:]
		}
	}
	return nil, fmt.Errorf("%w: no _go_.o member", ErrArchive)
}
