package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// FUNCTION DUMP and RESTORE payloads (functions.c functionsDumpCommand):
// one FUNCTION2 record per library, then the RDB version (2 bytes, little
// endian) and the CRC64 of everything before it (8 bytes, little endian),
// the footer DUMP puts on a key's payload.

// AppendFunctionsPayload appends the DUMP payload of the libraries' codes.
func AppendFunctionsPayload(dst []byte, codes []string) []byte {
	start := len(dst)
	for _, code := range codes {
		dst = AppendFunction(dst, []byte(code))
	}
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	return binary.LittleEndian.AppendUint64(dst, crc64Update(0, dst[start:]))
}

// ErrPayload is verifyDumpPayload's refusal, worded as FUNCTION RESTORE's.
var ErrPayload = errors.New("DUMP payload version or checksum are wrong")

// ParseFunctionsPayload checks a FUNCTION RESTORE payload's footer (RDB
// version at most ours, CRC64) and returns the libraries' codes; other
// errors are functionRestoreCommand's texts.
func ParseFunctionsPayload(p []byte) ([][]byte, error) {
	if len(p) < 10 {
		return nil, ErrPayload
	}
	footer := p[len(p)-10:]
	if int(binary.LittleEndian.Uint16(footer)) > Version {
		return nil, ErrPayload
	}
	if crc64Update(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, ErrPayload
	}
	body := p[:len(p)-10]
	var codes [][]byte
	for len(body) > 0 {
		switch body[0] {
		case opFunctionPreGA:
			return nil, errors.New("Pre-GA function format not supported")
		case opFunction2:
		default:
			return nil, errors.New("given type is not a function")
		}
		d := &decoder{r: bytes.NewReader(body[1:]), buf: make([]byte, 4096)}
		code, err := readPayloadString(d)
		if err != nil {
			return nil, errors.New("failed loading the given functions payload")
		}
		codes = append(codes, append([]byte(nil), code...))
		body = body[1+d.offset():]
	}
	return codes, nil
}

// readPayloadString reads one string, turning a decoder panic (a bug, never
// the input's fault) into an error as Load does.
func readPayloadString(d *decoder) (s []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("rdb: internal error: %v", p)
		}
	}()
	return d.readString()
}
