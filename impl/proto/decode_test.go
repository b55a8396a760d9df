package proto_test

import (
	"errors"
	"testing"

	. "github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/prototest"
)

func TestDecodeValid(t *testing.T) {
	var d Decoder
	for _, tc := range prototest.Valid {
		t.Run(tc.Name, func(t *testing.T) {
			var got Request
			if err := d.Decode([]byte(tc.Line), &got); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got != tc.Want {
				t.Fatalf("Decode:\n got %+v\nwant %+v", got, tc.Want)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("Validate of a decoded request: %v", err)
			}
			again, err := Decode(AppendRequest(nil, &got))
			if err != nil || again != got {
				t.Fatalf("decode(encode(x)) = %+v, %v; want %+v", again, err, got)
			}
		})
	}
}

func TestDecodeBad(t *testing.T) {
	var d Decoder
	for _, tc := range prototest.Bad {
		t.Run(tc.Name, func(t *testing.T) {
			var got Request
			err := d.Decode([]byte(tc.Line), &got)
			if !errors.Is(err, tc.Want) {
				t.Fatalf("Decode error = %v, want %v", err, tc.Want)
			}
			for _, other := range DecodeErrors {
				if other != tc.Want && errors.Is(err, other) {
					t.Fatalf("error %v also matches %v", err, other)
				}
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			if de.ID != tc.ID || got.ID != tc.ID {
				t.Fatalf("recovered id = %v (request %v), want %v", de.ID, got.ID, tc.ID)
			}
			if de.Field != tc.Field {
				t.Fatalf("field = %q, want %q", de.Field, tc.Field)
			}
			if (got != Request{ID: tc.ID}) {
				t.Fatalf("a failed decode left fields set: %+v", got)
			}
			o := ErrorObjectOf(err)
			if o.Code != tc.Want.Code || o.Type != tc.Want.Type {
				t.Fatalf("error object %+v, want code %d type %s", o, tc.Want.Code, tc.Want.Type)
			}
		})
	}
}
