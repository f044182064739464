package keyspace

import (
	"strconv"

	"github.com/svcdb/svcdb/shard/values"
)

// bulkID replies id as a bulk string without a scratch buffer.
func (c *Ctx) bulkID(id values.StreamID) {
	c.Out = append(c.Out, '$')
	c.Out = strconv.AppendInt(c.Out, int64(values.UintLen(id.Ms)+1+values.UintLen(id.Seq)), 10)
	c.Out = append(c.Out, '\r', '\n')
	c.Out = values.AppendStreamID(c.Out, id)
	c.Out = append(c.Out, '\r', '\n')
}

const errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"

// parseID parses an ID argument, replying Redis' error when it is invalid.
func (c *Ctx) parseID(b []byte, missingSeq uint64, strict bool) (values.StreamID, bool) {
	id, ok := values.ParseStreamID(b, missingSeq, strict, nil)
	if !ok {
		c.Err(errInvalidStreamID)
	}
	return id, ok
}

// parseIntervalID is streamParseIntervalIDOrReply: a "(" prefix makes the
// bound exclusive (and the ID strict).
func (c *Ctx) parseIntervalID(b []byte, missingSeq uint64) (id values.StreamID, exclusive, ok bool) {
	if len(b) > 1 && b[0] == '(' {
		id, ok = c.parseID(b[1:], missingSeq, true)
		return id, true, ok
	}
	id, ok = c.parseID(b, missingSeq, false)
	return id, false, ok
}
