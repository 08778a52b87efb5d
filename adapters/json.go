package adapters

import (
	"bytes"
	"encoding/json"
	"errors"
)

// DecodeObject unmarshals data, which must be one JSON object, into v, for an adapter's decoder.
// Syntax errors and non-objects are malformed (an error wrapping ErrMalformed that names what);
// a field of the wrong JSON type is left zero and is not an error: harnesses change field types
// between versions, and one odd field must not cost the whole event.
func DecodeObject(what string, data []byte, v any) error {
	if !IsObject(data) {
		return Malformed("%s: missing or not a JSON object", what)
	}
	err := json.Unmarshal(data, v)
	if _, ok := errors.AsType[*json.UnmarshalTypeError](err); err != nil && !ok {
		return Malformed("%s: %v", what, err)
	}
	return nil
}

// UnmarshalObject fills v from data when data is a JSON object, leaving v zero otherwise and
// fields of the wrong type zero. For optional parts of an event, where bad input is no error.
func UnmarshalObject(data []byte, v any) {
	if IsObject(data) {
		_ = json.Unmarshal(data, v)
	}
}

// IsObject reports whether data's first non-blank byte opens a JSON object.
func IsObject(data []byte) bool { return firstByte(data) == '{' }

// IsArray reports whether data's first non-blank byte opens a JSON array.
func IsArray(data []byte) bool { return firstByte(data) == '[' }

// firstByte returns data's first non-blank byte, 0 for none.
func firstByte(data []byte) byte {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 {
		return 0
	}
	return data[0]
}
