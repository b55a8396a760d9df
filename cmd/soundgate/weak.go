package main

// weakDisplay prints agents' ids raw: the deliberately weakened build
// (adversary_weak_display) that a negative control of cmd/adversary runs.
var weakDisplay bool
