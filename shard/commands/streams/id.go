package streams

import (
	"strconv"

	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/values"
)

// bulkID replies id as a bulk string without a scratch buffer.
func bulkID(c *keyspace.Ctx, id values.StreamID) {
	c.Out = append(c.Out, '$')
	c.Out = strconv.AppendInt(c.Out, int64(values.UintLen(id.Ms)+1+values.UintLen(id.Seq)), 10)
	c.Out = append(c.Out, '\r', '\n')
	c.Out = values.AppendStreamID(c.Out, id)
	c.Out = append(c.Out, '\r', '\n')
}

const errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"

// parseID parses an ID argument, replying Redis' error when it is invalid.
func parseID(c *keyspace.Ctx, b []byte, missingSeq uint64, strict bool) (values.StreamID, bool) {
	id, ok := values.ParseStreamID(b, missingSeq, strict, nil)
	if !ok {
		c.Err(errInvalidStreamID)
	}
	return id, ok
}

// parseIntervalID is streamParseIntervalIDOrReply: a "(" prefix makes the
// bound exclusive (and the ID strict).
func parseIntervalID(c *keyspace.Ctx, b []byte, missingSeq uint64) (id values.StreamID, exclusive, ok bool) {
	if len(b) > 1 && b[0] == '(' {
		id, ok = parseID(c, b[1:], missingSeq, true)
		return id, true, ok
	}
	id, ok = parseID(c, b, missingSeq, false)
	return id, false, ok
}
