package netloop

// runAsync runs a command's slow work (seconds, such as a diagnostic bundle
// with a CPU profile) on its own goroutine, so the client's event loop keeps
// serving its other clients. The client parses nothing more until the reply
// is in, exactly as while its batch is queued: replies stay in order. work
// must not touch the client; its result is the encoded reply.
func (s *Server) runAsync(c *client, work func() []byte) {
	if c.multi.inExec { // the transaction's reply is one array: no parking inside it
		c.out = append(c.out, work()...)
		return
	}
	c.to(connAwaiting)
	go func() {
		reply := work()
		c.deferred.Store(&reply)
		_ = c.conn.Wake(nil)
	}()
}
