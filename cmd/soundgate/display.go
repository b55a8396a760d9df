package main

import "github.com/soundgate/soundgate/impl/proto"

// shown is an id an agent chose as the commands print it (proto.Shown), raw in the
// adversary_weak_display build.
func shown(s string) string {
	if weakDisplay {
		return s
	}
	return proto.Shown(s)
}

// shownText is a text an agent or an approver wrote (a description, a reason) as the
// commands print it (proto.ShownText), raw in the adversary_weak_display build.
func shownText(s string) string {
	if weakDisplay {
		return s
	}
	return proto.ShownText(s)
}
