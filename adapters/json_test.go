package adapters_test

import (
	"errors"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
)

func TestDecodeObject(t *testing.T) {
	type payload struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	for _, tt := range []struct {
		name      string
		in        string
		want      payload
		malformed bool
	}{
		{"OK", ` {"name":"a","count":2}`, payload{"a", 2}, false},
		{"WrongFieldTypeLeftZero", `{"name":"a","count":"two"}`, payload{Name: "a"}, false},
		{"ErrSyntax", `{"name":`, payload{}, true},
		{"ErrArray", `[1]`, payload{}, true},
		{"ErrEmpty", ``, payload{}, true},
		{"ErrNull", `null`, payload{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got payload
			err := adapters.DecodeObject("thing", []byte(tt.in), &got)
			if tt.malformed != (err != nil) || (err != nil && !errors.Is(err, adapters.ErrMalformed)) {
				t.Fatalf("err: got %v, want malformed %v", err, tt.malformed)
			}
			if !tt.malformed && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			var lenient payload
			adapters.UnmarshalObject([]byte(tt.in), &lenient)
			if !tt.malformed && lenient != tt.want || tt.malformed && tt.name != "ErrSyntax" && lenient != (payload{}) {
				t.Errorf("UnmarshalObject: got %+v", lenient)
			}
		})
	}
}

func TestIsObjectIsArray(t *testing.T) {
	for _, tt := range []struct {
		in            string
		object, array bool
	}{
		{`{"a":1}`, true, false},
		{" \n\t{", true, false},
		{`[1]`, false, true},
		{"\r\n [", false, true},
		{`"x"`, false, false},
		{`null`, false, false},
		{``, false, false},
		{"   ", false, false},
	} {
		if got := adapters.IsObject([]byte(tt.in)); got != tt.object {
			t.Errorf("IsObject(%q): got %v, want %v", tt.in, got, tt.object)
		}
		if got := adapters.IsArray([]byte(tt.in)); got != tt.array {
			t.Errorf("IsArray(%q): got %v, want %v", tt.in, got, tt.array)
		}
	}
}
