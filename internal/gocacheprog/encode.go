package gocacheprog

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"
)

// response is the answer (cacheprog.Response).
type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// appendResponse appends r to b as encoding/json's Encoder writes it,
// byte for byte, newline included, without reflection: the go command
// waits for each answer, and there are thousands in a build.
func appendResponse(b []byte, r *response) []byte {
	b = append(b, `{"ID":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	if r.Err != "" {
		b = append(b, `,"Err":`...)
		b = appendString(b, r.Err)
	}
	if len(r.KnownCommands) > 0 {
		b = append(b, `,"KnownCommands":[`...)
		for i, c := range r.KnownCommands {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, c)
		}
		b = append(b, ']')
	}
	if r.Miss {
		b = append(b, `,"Miss":true`...)
	}
	if len(r.OutputID) > 0 {
		b = append(b, `,"OutputID":"`...)
		b = base64.StdEncoding.AppendEncode(b, r.OutputID)
		b = append(b, '"')
	}
	if r.Size != 0 {
		b = append(b, `,"Size":`...)
		b = strconv.AppendInt(b, r.Size, 10)
	}
	if r.Time != nil {
		b = append(b, `,"Time":`...)
		if t, err := r.Time.MarshalJSON(); err == nil {
			b = append(b, t...)
		} else {
			b = append(b, "null"...) // a year past 9999: no time said
		}
	}
	if r.DiskPath != "" {
		b = append(b, `,"DiskPath":`...)
		b = appendString(b, r.DiskPath)
	}
	return append(b, "}\n"...)
}

// appendString appends s as a JSON string as encoding/json writes it:
// as it is where nothing in it needs escaping, else through the package.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
