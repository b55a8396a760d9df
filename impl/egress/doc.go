// Package egress is the gate's HTTP(S) egress proxy: the only door out of a sandbox
// (impl/sandbox). Each request the agent sends through it, in absolute-URI form
// ("GET http://host/path") or as a CONNECT tunnel ("CONNECT host:443"), is an effect:
// it is admitted through the gate (an Admitter) at the moment it would be forwarded,
// and forwarded only once admitted.
//
// The answers map to HTTP as follows (each refusal is a plain-text body that says why,
// and a Soundgate-Verdict header):
//
//	admit      forwarded; the outcome is reported to the gate with Complete
//	held       the proxy waits (asking again) while the run is paused, then forwards
//	           or refuses; 504 if it is still held after Proxy.HeldWaitMax
//	duplicate  409: the effect was already performed under this key
//	denied     403, with the reason (cancelled, timed_out, stale_epoch, rejected)
//	error      502: the gate could not be asked; nothing was forwarded
//
// The run of an effect is Proxy.Run; a Soundgate-Run header may only repeat it (403
// otherwise: an agent may not move its effects to a run that is not paused), and
// names the run only for a proxy without one. The key comes from the Soundgate-Key
// header, or is derived from the request (see Key): requests that are the same in
// method, target and body are told apart by their order of appearance, so that a
// replay of the same agent in a new proxy asks for the same keys. Both headers are
// removed before forwarding.
package egress
