// Package strictjson is askd's strict JSON (SPEC §7): JSON as encoding/json
// reads it, less what lets two readers see two different values — an object
// key given twice, text that is not UTF-8, half a surrogate pair — and, for
// Decode, a field the Go type has no place for. Every refusal names where
// and why: "questions[0].colour: unknown field".
//
//   - Check (scan.go) scans JSON a Go caller built, such as an approval's
//     payload, for those rules.
//   - Decode and DecodeOpen (decode.go) read a request body into a Go value:
//     a good body takes one scan, guided by the type, and json.Unmarshal; a
//     body with a problem is parsed again as a tree to name the problem.
//   - Object (object.go) reads one object's members in the order written,
//     as a form's schema needs.
//
// It imports only the standard library. It is not under internal/ because
// the root package askd, which imports nothing of internal/, validates with
// it; askd.Decode and askd.DecodeOpen wrap Decode and DecodeOpen and are
// what the adapters call, turning an *Error into askd's EINVALID.
package strictjson
