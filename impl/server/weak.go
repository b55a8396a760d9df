package server

// weakened turns defences off in the deliberately weakened builds that
// cmd/adversary's negative controls run (build tags adversary_weak_*, one file
// each): a probe class that finds nothing on such a build could not find anything.
// Every field is false in a normal build.
var weakened struct {
	reserve bool // agents may take every connection; no cap per token
	admin   bool // ServeAdmin serves as Serve: the shared pool, agents too
	socket  bool // ListenUnix deletes whatever is at the path (no lock)
	quota   bool // no cap on one token's waiting admits, runs or result bytes
	hello   bool // each read before hello moves the hello deadline (event loop)
	idle    bool // no connection is closed for idleness (idleCheck)
}

// lenientRoles, set in the adversary_weak_roles build, is its ParseRoles: unknown
// fields, duplicate keys, no runs as every run for approvers and operators.
var lenientRoles func([]byte) (*Roles, error)
