package netloop

// Keyspace notifications (notify-keyspace-events) as Redis 7.0.15's
// notify.c: every event the keyspace reports (keyspace/notify.go: command
// handlers through Ctx.Notify, expiry, eviction, new keys) is published
// on __keyspace@<db>__:<key> (class K, message the event) and then
// __keyevent@<db>__:<event> (class E, message the key), through the
// Pub/Sub registry (netloop/pubsub, Registry.Notify): the token holder
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
	"github.com/svcdb/svcdb/core/config"
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
// after its class check, which the keyspace made): pubsub.Registry.Notify,
// with the command's context as the publisher (client.Deliver).
func (s *Server) notifyKeyspace(by *keyspace.Ctx, db int, event string, key []byte) {
	classes := keyspace.NotifyClass(s.notifyOn.Load())
	var from any
	if by != nil {
		from = by
	}
	s.pubsub.Notify(from, db, event, key, classes&keyspace.NotifyKeyspace != 0, classes&keyspace.NotifyKeyevent != 0)
}
