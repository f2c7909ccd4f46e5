package askd

import (
	"errors"

	"github.com/askd-dev/askd/strictjson"
)

// Decode parses data into v strictly: a field v does not have is refused by its
// path (`questions[0].colour: unknown field`), as is a key given twice in one
// object (`questions[0].header: duplicate key; ...`) and text that is not
// UTF-8 (`title: not valid UTF-8 (byte 0xff)`), at any depth, inside free
// objects such as payloads too; a value of the wrong type is refused by its
// path and the type wanted, and anything after the JSON value is refused.
// Errors are EINVALID *Errors. The scanning is package strictjson's; this is
// the door every adapter decodes a body through.
func Decode(data []byte, v any) error {
	return decodeError(strictjson.Decode(data, v))
}

// DecodeOpen is Decode for bodies that carry fields askd does not read, such
// as Claude Code's hook inputs, which gain fields from version to version:
// those are ignored. Everything else is as strict as Decode: one JSON object,
// no key twice, UTF-8 only, values of the right type.
func DecodeOpen(data []byte, v any) error {
	return decodeError(strictjson.DecodeOpen(data, v))
}

// decodeError is strictjson's refusal as askd's error: EINVALID with its
// message, or, when a type's own UnmarshalJSON refused with an *Error
// (Choice does), that *Error as it is.
func decodeError(err error) error {
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return err
	}
	var e *Error
	if errors.As(se.Err, &e) {
		return e
	}
	return &Error{Code: EINVALID, Message: se.Message}
}
