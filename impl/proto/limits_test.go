package proto_test

import (
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	. "github.com/soundgate/soundgate/impl/proto"
)

// The wire's size limits are the default core's: a request the wire accepts is never
// refused by the default core for its size, and the other way round.
func TestLimitsMatchCore(t *testing.T) {
	l := core.DefaultLimits()
	if RunBytesMax != l.RunBytesMax || KeyBytesMax != l.KeyBytesMax || ResultBytesMax != l.ResultBytesMax {
		t.Fatalf("proto limits run %d key %d result %d, core defaults run %d key %d result %d",
			RunBytesMax, KeyBytesMax, ResultBytesMax, l.RunBytesMax, l.KeyBytesMax, l.ResultBytesMax)
	}
}

// The note's bounds are the core's: what the wire accepts the core stores.
func TestNoteLimitsMatchCore(t *testing.T) {
	if DescriptionBytesMax != core.DescriptionBytesMax || ReasonBytesMax != core.ReasonBytesMax {
		t.Fatalf("proto description %d reason %d, core %d %d", DescriptionBytesMax, ReasonBytesMax, core.DescriptionBytesMax, core.ReasonBytesMax)
	}
	longest := "sha512:" + strings.Repeat("0", 128)
	if core.CheckArgsDigest(longest) != nil || len(longest) != ArgsDigestBytesMax {
		t.Fatalf("ArgsDigestBytesMax %d is not the longest digest", ArgsDigestBytesMax)
	}
}
