package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/secretjson"
)

// insertMeta is every field of an insert request but the value.
type insertMeta struct {
	ID      int64          `json:"id"`
	Type    string         `json:"type"`
	Tab     int64          `json:"tab"`
	Frame   int64          `json:"frame"`
	Token   string         `json:"token"`
	Origins []string       `json:"origins"`
	Kind    string         `json:"kind"`
	Form    *fill.FormInfo `json:"form,omitempty"`
	Then    string         `json:"then"`
}

// insertedReply is the extension's "inserted" reply.
type insertedReply struct {
	Type        string `json:"type"`
	Matched     bool   `json:"matched"`
	Submitted   bool   `json:"submitted"`
	Navigated   bool   `json:"navigated"`
	Cleared     bool   `json:"cleared"`
	Remains     bool   `json:"remains"`
	Stopped     string `json:"stopped"`
	StoppedBy   string `json:"stopped_by"`
	Unconfirmed bool   `json:"unconfirmed"`
}

// Insert asks the extension to re-check the field named by in and, only if
// it is unchanged, insert value, then do what opt.Then says. value is
// copied once, escaped, into the request (secretjson.Message), which the
// port zeroes right after it is written; Insert neither modifies nor keeps
// value (the caller zeroes it).
func (b *Bridge) Insert(ctx context.Context, in fill.Inspection, value []byte, opt fill.InsertOptions) (fill.Verdict, error) {
	then, err := fill.NormalizeThen(opt.Then)
	if err != nil {
		return fill.Verdict{}, err
	}
	defer b.timed("insert", time.Now())
	raw, err := b.port.CallRaw(ctx, func(id int64) ([]byte, error) {
		body, err := secretjson.Message(insertMeta{
			ID: id, Type: "insert", Tab: in.Tab, Frame: in.Frame,
			Token: in.Token, Origins: in.Origins, Kind: in.Field.Kind, Form: in.Form, Then: then,
		}, value)
		if err != nil {
			return nil, fmt.Errorf("encode insert: %w", err)
		}
		return body, nil
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
		var r insertedReply
		if err := decode("insert", raw, "inserted", &r); err != nil {
			return fill.Verdict{}, err
		}
		return fill.Verdict{
			Inserted: true, Matched: r.Matched, Submitted: r.Submitted, Navigated: r.Navigated,
			Cleared: r.Cleared, Remains: r.Remains, Stopped: r.Stopped, StoppedBy: r.StoppedBy,
			Unconfirmed: r.Unconfirmed,
		}, nil
	case "not_inserted":
		var r notInsertedReply
		if err := decode("insert", raw, "not_inserted", &r); err != nil {
			return fill.Verdict{}, err
		}
		if r.Reason == "" {
			r.Reason = "unknown"
		}
		return fill.Verdict{Reason: r.Reason}, nil
	}
	return fill.Verdict{}, fmt.Errorf("extension: unexpected reply %s to insert", shortType(env.Type))
}
