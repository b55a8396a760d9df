package main

import "github.com/soundgate/soundgate/impl/proto"

// shown is an id an agent chose as the commands print it (proto.Shown).
func shown(s string) string {
	if weakDisplay {
		return s
	}
	return proto.Shown(s)
}

// shownText is a message of the gate's as the commands print it (proto.ShownText).
func shownText(s string) string { return proto.ShownText(s) }
