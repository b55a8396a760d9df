package proto_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/proto"
)

// TestShown: which ids are printed as they are and which are quoted.
func TestShown(t *testing.T) {
	for _, c := range []struct{ id, want string }{
		{"demo-1", "demo-1"},
		{"tool-call:9f2c/a", "tool-call:9f2c/a"},
		{"café", "café"},
		{"", `""`},
		{"wire money", `"wire money"`},
		{"k\nrun demo-1 cancelled", `"k\nrun demo-1 cancelled"`},
		{"k\rrun", `"k\rrun"`},
		{"\x1b[2Kpending=[]", `"\x1b[2Kpending=[]"`},
		{"\u202eyenom-eriw", `"\u202eyenom-eriw"`}, // right-to-left override
		{"wire\u200bmoney", `"wire\u200bmoney"`},   // zero-width space
		{"wire\u00a0money", `"wire\u00a0money"`},   // no-break space
		{`say "hi"`, `"say \"hi\""`},
		{`a\b`, `"a\\b"`},
		{"\u2028", `"\u2028"`}, // line separator
	} {
		require.Equal(t, c.want, proto.Shown(c.id), "%q", c.id)
	}
}

// TestShownNeverPrintsWhatItHides: for any string, what shown prints holds only
// printable characters and no line break, and gives the id back: as it is, or
// unquoted. Two ids never look alike.
func TestShownNeverPrintsWhatItHides(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pools := []rune{'a', 'Z', '0', '-', ' ', '"', '\\', '\n', '\r', '\t', 0, 0x1b, 0x7f, 0x85, 0xa0, 0x200b, 0x200d, 0x202e, 0x2066, 0x2028, 0xfeff, 'é', '语', 0x1f600, 0xe000, 0xfffd}
	seen := map[string]string{}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteRune(pools[rng.IntN(len(pools))])
		}
		id := b.String()
		if rng.IntN(8) == 0 {
			id += "\xff" // not UTF-8
		}
		out := proto.Shown(id)
		for _, r := range out {
			require.True(t, strconv.IsPrint(r), "Shown(%q) = %q prints %U", id, out, r)
		}
		back := out
		if strings.HasPrefix(out, `"`) {
			var err error
			back, err = strconv.Unquote(out)
			require.NoError(t, err, out)
		}
		require.Equal(t, id, back)
		if other, dup := seen[out]; dup {
			require.Equal(t, other, id, "two ids print alike: %q", out)
		}
		seen[out] = id
	}
}
