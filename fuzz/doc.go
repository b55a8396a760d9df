// Package fuzz holds soundgate's Go native fuzz targets (go test -fuzz). It has no
// production code: the targets live in its _test.go files, one file per subject, and
// their seed corpora under testdata/fuzz/<Target>/ (run as regression tests by every
// `go test ./...`).
//
// The wire decoder's targets (decoder_test.go):
//
//   - FuzzDecode: any line gives a valid request or exactly one typed error, never a
//     panic; an accepted line re-encodes to a line that decodes to the same request;
//     an error answer for it is valid JSON that reads back with the same id and type;
//     allocations and time per line stay within a budget linear in the line's length.
//   - FuzzDifferential: the production decoder and the reference decoder
//     (impl/proto/protoref) agree on acceptance, on the request, and on the kind, id
//     and field of every error.
//   - FuzzRoundTrip: decode(encode(x)) == x for every valid request x built from the
//     fuzzer's values, with both decoders.
//   - FuzzReaderSplit: a byte stream gives the same lines, errors and requests whether
//     it arrives whole, split at any point or byte by byte, and with LF or CRLF.
//   - FuzzDecodeResponse: any answer line is read back or refused, never a panic; an
//     answer that reads back re-encodes to one that reads back the same.
//
// docs/verify/fuzz.md says how to run them for a bounded time (make verify), for
// hours, and how a crash becomes a committed regression seed.
package fuzz
