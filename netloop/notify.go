package netloop

// Keyspace notifications (notify-keyspace-events) as Redis 7.0.15's
// notify.c: every event the keyspace reports (keyspace/notify.go: command
// handlers through Ctx.Notify, expiry, eviction, new keys) is published
// on __keyspace@<db>__:<key> (class K, message the event) and then
// __keyevent@<db>__:<event> (class E, message the key), through the
// Pub/Sub registry and mailboxes (pubsub.go): the shard's token holder
// that reports an event encodes it into each subscriber's mailbox and
// wakes its loop, never waiting on a subscriber.
//
// A subscriber that is itself running the command (a RESP3 client
// subscribed to its own events) gets the message straight into the reply
// buffer being built (its own context's, or its batch's), where Redis
// puts it: before or after the command's reply as the handler reports it.
// When the event is the keyspace's own (new, expired, evicted), the
// message goes through the mailbox and follows the reply instead
// (docs/compatibility.md).

import (
	"strconv"

	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// bindNotifyParams applies notify-keyspace-events now and on every change.
func (s *Server) bindNotifyParams(reg *config.Registry) {
	apply := func(string) error {
		classes, ok := keyspace.ParseNotifyClasses(reg.String("notify-keyspace-events"))
		if !ok {
			classes = 0 // refused by the parameter's check before it gets here
		}
		s.notifyOn.Store(uint32(classes))
		s.rt.SetNotify(classes, s.notifyKeyspace)
		return nil
	}
	_ = apply("")
	reg.OnChange("notify-keyspace-events", apply)
}

// notifyKeyspace is the keyspace's Notifier (Redis' notifyKeyspaceEvent
// after its class check, which the keyspace made).
func (s *Server) notifyKeyspace(by *keyspace.Ctx, db int, event string, key []byte) {
	classes := keyspace.NotifyClass(s.notifyOn.Load())
	var buf [128]byte
	if classes&keyspace.NotifyKeyspace != 0 {
		ch := append(buf[:0], "__keyspace@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, key...)
		s.publishEvent(by, ch, []byte(event))
	}
	if classes&keyspace.NotifyKeyevent != 0 {
		ch := append(buf[:0], "__keyevent@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, event...)
		s.publishEvent(by, ch, key)
	}
}

// publishEvent is publish for an event: as PUBLISH to channel, except
// that a subscriber whose command reported the event (by) gets the
// message in that command's reply buffer.
func (s *Server) publishEvent(by *keyspace.Ctx, channel, msg []byte) {
	h := &s.pubsub
	h.mu.RLock()
	for _, to := range h.channels[string(channel)] {
		s.deliverEvent(by, to, "message", nil, channel, msg)
	}
	for _, p := range h.patterns {
		if !glob.Match(p.pattern, channel, false) {
			continue
		}
		for _, to := range p.subs {
			s.deliverEvent(by, to, "pmessage", p.pattern, channel, msg)
		}
	}
	h.mu.RUnlock()
	if s.evWatch.n.Load() != 0 {
		s.offerEvent(channel, msg) // the debug UI's watches (eventwatch.go)
	}
}

func (s *Server) deliverEvent(by *keyspace.Ctx, to *client, kind string, pattern, channel, msg []byte) {
	if by != nil && (by == &to.ctx || by == &to.batch.Ctx) && !to.killed.Load() {
		by.Out = appendMessage(by.Out, by.RESP3, kind, pattern, channel, msg)
		return
	}
	s.deliver(nil, to, kind, pattern, channel, msg)
}
