package a2a

import (
	"encoding/json"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
)

// encodeRequestID encodes a request with the given id. A message request
// as sendRequest builds it is written in pieces, with the same bytes as
// json.Marshal of the whole (TestEncodeRequestBytes): the SDK types nest
// MarshalJSON calls about 4.5 KiB deep, which took the goroutine that
// sends a run's turn past 8 KiB of stack. A goroutine's stack doubles then
// and is halved only when less than a quarter is in use, which a waiting
// stream never reaches: every open stream kept 16 KiB instead of 8.
// Marshalling each part and the metadata on their own saves the five
// enclosing levels (envelope, params, message, parts list).
func encodeRequestID(method, id string, params any) ([]byte, error) {
	if p, ok := params.(*a2asdk.SendMessageRequest); ok && piecewise(method, id, p) {
		return encodeSend(method, id, p)
	}
	return json.Marshal(rpcRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
}

// piecewise reports whether encodeSend writes p: no tenant, no params
// metadata, a message without extensions or referenced tasks, and a
// method and id that need no escaping.
func piecewise(method, id string, p *a2asdk.SendMessageRequest) bool {
	m := p.Message
	return m != nil && p.Tenant == "" && len(p.Metadata) == 0 && len(m.Extensions) == 0 &&
		len(m.ReferenceTasks) == 0 && plainJSONString(method) && plainJSONString(id)
}

// encodeSend writes the fields in the order and with the omitempty rules
// of rpcRequest, SendMessageRequest and Message.
func encodeSend(method, id string, p *a2asdk.SendMessageRequest) ([]byte, error) {
	m := p.Message
	b := make([]byte, 0, 512)
	b = append(b, `{"jsonrpc":"2.0","id":"`...)
	b = append(b, id...)
	b = append(b, `","method":"`...)
	b = append(b, method...)
	b = append(b, `","params":{`...)
	var err error
	if p.Config != nil {
		if b, err = appendField(b, `"configuration":`, p.Config); err != nil {
			return nil, err
		}
		b = append(b, ',')
	}
	if b, err = appendField(b, `"message":{"messageId":`, m.ID); err != nil {
		return nil, err
	}
	if m.ContextID != "" {
		if b, err = appendField(b, `,"contextId":`, m.ContextID); err != nil {
			return nil, err
		}
	}
	if len(m.Metadata) > 0 {
		if b, err = appendField(b, `,"metadata":`, m.Metadata); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"parts":`...)
	if m.Parts == nil {
		b = append(b, "null"...)
	} else {
		for i, part := range m.Parts {
			sep := ","
			if i == 0 {
				sep = "["
			}
			if b, err = appendField(b, sep, part); err != nil {
				return nil, err
			}
		}
		if len(m.Parts) == 0 {
			b = append(b, '[')
		}
		b = append(b, ']')
	}
	if b, err = appendField(b, `,"role":`, m.Role); err != nil {
		return nil, err
	}
	if m.TaskID != "" {
		if b, err = appendField(b, `,"taskId":`, m.TaskID); err != nil {
			return nil, err
		}
	}
	return append(b, "}}}"...), nil
}

// appendField appends prefix and v as json.Marshal writes it.
func appendField(b []byte, prefix string, v any) ([]byte, error) {
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b = append(b, prefix...)
	return append(b, enc...), nil
}

// plainJSONString reports whether s is written between quotes unchanged by
// encoding/json (method names and uuids are).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
