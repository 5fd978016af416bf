package bridge

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fillgate/fillgate/host/fill"
	"github.com/fillgate/fillgate/host/nativemsg"
)

// insertMeta is every field of an insert request but the value.
type insertMeta struct {
	ID      int64    `json:"id"`
	Type    string   `json:"type"`
	Tab     int64    `json:"tab"`
	Frame   int64    `json:"frame"`
	Token   string   `json:"token"`
	Origins []string `json:"origins"`
	Kind    string   `json:"kind"`
}

// Insert asks the extension to re-check the field named by in and, only if
// it is unchanged, insert value. value is copied once, escaped, into the
// request buffer, which is zeroed right after it is written; Insert neither
// modifies nor keeps value (the caller zeroes it).
func (b *Bridge) Insert(ctx context.Context, in fill.Inspection, value []byte) (fill.Verdict, error) {
	raw, err := b.port.CallRaw(ctx, func(id int64) ([]byte, error) {
		return insertBody(insertMeta{
			ID: id, Type: "insert", Tab: in.Tab, Frame: in.Frame,
			Token: in.Token, Origins: in.Origins, Kind: in.Field.Kind,
		}, value)
	})
	if err != nil {
		return fill.Verdict{}, callError("insert", err)
	}
	var env struct{ Type string }
	if err := json.Unmarshal(raw, &env); err != nil {
		return fill.Verdict{}, fmt.Errorf("extension: malformed reply to insert")
	}
	switch env.Type {
	case "inserted":
		var r struct{ Matched bool }
		if err := decode("insert", raw, "inserted", &r); err != nil {
			return fill.Verdict{}, err
		}
		return fill.Verdict{Inserted: true, Matched: r.Matched}, nil
	case "not_inserted":
		var r struct{ Reason string }
		if err := decode("insert", raw, "not_inserted", &r); err != nil {
			return fill.Verdict{}, err
		}
		if r.Reason == "" {
			r.Reason = "unknown"
		}
		return fill.Verdict{Reason: r.Reason}, nil
	}
	return fill.Verdict{}, fmt.Errorf("extension: unexpected reply %q to insert", env.Type)
}

// insertBody returns meta as a JSON object with a "value" member holding
// value. The buffer is sized once, so no reallocation leaves a copy of value
// behind.
func insertBody(meta insertMeta, value []byte) ([]byte, error) {
	head, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encode insert: %w", err)
	}
	n, err := nativemsg.JSONStringLen(value)
	if err != nil {
		return nil, fmt.Errorf("encode insert: %w", err)
	}
	const key = `,"value":`
	head = head[:len(head)-1] // drop the closing brace
	body := make([]byte, 0, len(head)+len(key)+n+1)
	body = append(body, head...)
	body = append(body, key...)
	body, err = nativemsg.AppendJSONString(body, value)
	if err != nil {
		clear(body)
		return nil, fmt.Errorf("encode insert: %w", err)
	}
	return append(body, '}'), nil
}
