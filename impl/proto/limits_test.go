package proto_test

import (
	"fmt"
	"regexp"
	"strconv"
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

// TestLimitsDocumented: the wire's limits are the numbers of docs/protocol.md's
// "Limits" table, which client authors build on, and the protocol version is the one
// the page describes. The other tests use the constants on both sides (a line of
// LineBytesMax bytes, a run of RunBytesMax+1), so a constant changed in the code
// alone would go unnoticed by them.
func TestLimitsDocumented(t *testing.T) {
	text := protocolDoc(t)
	section := docSection(t, text, "Limits", "Versioning")
	// Each row: | name | value | error |; the numbers of the value cell, in order.
	number := regexp.MustCompile(`[0-9][0-9,]*`)
	rows := map[string][]int64{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[1]) == "limit" {
			continue
		}
		var nums []int64
		for _, n := range number.FindAllString(cells[2], -1) {
			v, err := strconv.ParseInt(strings.ReplaceAll(n, ",", ""), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			nums = append(nums, v)
		}
		rows[strings.Trim(strings.TrimSpace(cells[1]), "`")] = nums
	}
	want := []struct {
		row  string
		nums []int64 // the numbers of the row's value cell
	}{
		{"line", []int64{LineBytesMax}},
		{"string id", []int64{IDBytesMax}},
		{"integer id, epoch, version", []int64{2, 53, 1}}, // "2^53-1"
		{"nesting of arrays and objects", []int64{DepthMax}},
		{"token", []int64{1, TokenBytesMax}},
		{"run", []int64{1, RunBytesMax}},
		{"key", []int64{1, KeyBytesMax}},
		{"result", []int64{0, ResultBytesMax}},
		{"wait_ms", []int64{0, WaitMsMax, 5}},        // "(5 minutes)"
		{"timeout_ms", []int64{1, TimeoutMsMax, 30}}, // "(30 days)"
	}
	for _, w := range want {
		got, ok := rows[w.row]
		if !ok {
			t.Errorf("docs/protocol.md's limits have no row %q", w.row)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(w.nums) {
			t.Errorf("limit %q: docs/protocol.md says %v, the package %v", w.row, got, w.nums)
		}
	}
	if IntMax != 1<<53-1 {
		t.Errorf("IntMax = %d, docs/protocol.md says 2^53-1", int64(IntMax))
	}
	if WaitMsMax != 5*60*1000 || TimeoutMsMax != 30*24*60*60*1000 {
		t.Errorf("WaitMsMax %d is not 5 minutes or TimeoutMsMax %d is not 30 days", WaitMsMax, int64(TimeoutMsMax))
	}
	page := regexp.MustCompile(`this page is version ([0-9]+)`).FindStringSubmatch(text)
	if page == nil || page[1] != strconv.Itoa(Version) {
		t.Errorf("Version = %d; docs/protocol.md says %q", Version, page)
	}
}
