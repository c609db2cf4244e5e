package transport

import (
	"io"

	"corkboard/board"
	"corkboard/transport/jsondec"
	"corkboard/transport/reqbody"
)

// DecodePushForTest decodes a push body from r as POST /sync does, within
// the push body limit (which r must enforce itself).
func DecodePushForTest(r io.Reader) (board.Push, error) {
	var p board.Push
	err := reqbody.DecodeFrom(jsondec.New(r), limitPushBody, reqbody.PushShape.Into(&p))
	return p, err
}
