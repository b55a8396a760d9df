package core_test

import "strings"

// digest is a well-formed args digest.
var digest = "sha256:" + strings.Repeat("0123456789abcdef", 4)
