// Package gatedrun is the integration pattern every Go framework adapter
// shares: one agent run on the gate, with a plan hook (register a plan's
// approvals and effects before any of its tools runs) and a commit point
// (admit, perform only if admitted, complete). The other two wirings are one
// client call each and are not part of Run: the human decides with an
// approver's client, and the operator cancels the gate run on a framework
// cancel and fences it on a framework timeout. It imports no framework;
// adapters call it from the framework's own extension points. Copy it into
// your project, or import it from this module.
//
// The commit point records an effect's value as its JSON and a replay gets it
// back decoded, as clients/node/gatedrun.mjs does, so both read each other's
// results; a value that cannot be stored whole is an error, never a cut.
package gatedrun
