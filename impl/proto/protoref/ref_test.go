package protoref_test

import (
	"errors"
	"testing"

	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/protoref"
	"github.com/soundgate/soundgate/impl/proto/prototest"
)

// The reference decoder gives every case of the protocol the answer the protocol
// prescribes, independently of the production decoder.
func TestReferenceValid(t *testing.T) {
	for _, tc := range prototest.Valid {
		t.Run(tc.Name, func(t *testing.T) {
			got, err := protoref.Decode([]byte(tc.Line))
			if err != nil || got != tc.Want {
				t.Fatalf("protoref.Decode = %+v, %v; want %+v", got, err, tc.Want)
			}
		})
	}
}

func TestReferenceBad(t *testing.T) {
	for _, tc := range prototest.Bad {
		t.Run(tc.Name, func(t *testing.T) {
			got, err := protoref.Decode([]byte(tc.Line))
			var de *proto.DecodeError
			if !errors.As(err, &de) || de.Err != tc.Want {
				t.Fatalf("protoref.Decode error = %v, want %v", err, tc.Want)
			}
			if de.ID != tc.ID || got.ID != tc.ID || de.Field != tc.Field {
				t.Fatalf("id %v field %q (request id %v), want id %v field %q", de.ID, de.Field, got.ID, tc.ID, tc.Field)
			}
		})
	}
}
