package keyspace

import "sync/atomic"

// Keyspace notifications (notify-keyspace-events), as Redis 7.0's
// notify.c: the classes, and the one call every path that changes a key
// makes (Ctx.Notify for commands, DB.notify for expiry and eviction).
// Publishing is not here: the Env's Notifier (netloop's Pub/Sub) formats
// the channels and fills the subscribers' mailboxes without waiting on
// them. With notifications off a call costs one atomic load and a test.

// NotifyClass is one class of keyspace events, Redis' NOTIFY_* bits.
type NotifyClass uint32

const (
	NotifyKeyspace NotifyClass = 1 << 0  // K: __keyspace@<db>__:<key> channels
	NotifyKeyevent NotifyClass = 1 << 1  // E: __keyevent@<db>__:<event> channels
	NotifyGeneric  NotifyClass = 1 << 2  // g: DEL, EXPIRE, RENAME, ...
	NotifyString   NotifyClass = 1 << 3  // $
	NotifyList     NotifyClass = 1 << 4  // l
	NotifySet      NotifyClass = 1 << 5  // s
	NotifyHash     NotifyClass = 1 << 6  // h
	NotifyZSet     NotifyClass = 1 << 7  // z
	NotifyExpired  NotifyClass = 1 << 8  // x
	NotifyEvicted  NotifyClass = 1 << 9  // e
	NotifyStream   NotifyClass = 1 << 10 // t
	NotifyKeyMiss  NotifyClass = 1 << 11 // m (not in A)
	NotifyLoaded   NotifyClass = 1 << 12 // modules only; never set here
	NotifyModule   NotifyClass = 1 << 13 // d: modules' events; none are published
	NotifyNew      NotifyClass = 1 << 14 // n (not in A)

	// NotifyAll is A: g$lshzxetd.
	NotifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash |
		NotifyZSet | NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule
)

// ParseNotifyClasses turns notify-keyspace-events' letters into classes
// (Redis' keyspaceEventsStringToFlags); ok is false for a letter that is
// not a class.
func ParseNotifyClasses(s string) (f NotifyClass, ok bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A':
			f |= NotifyAll
		case 'g':
			f |= NotifyGeneric
		case '$':
			f |= NotifyString
		case 'l':
			f |= NotifyList
		case 's':
			f |= NotifySet
		case 'h':
			f |= NotifyHash
		case 'z':
			f |= NotifyZSet
		case 'x':
			f |= NotifyExpired
		case 'e':
			f |= NotifyEvicted
		case 'K':
			f |= NotifyKeyspace
		case 'E':
			f |= NotifyKeyevent
		case 't':
			f |= NotifyStream
		case 'm':
			f |= NotifyKeyMiss
		case 'd':
			f |= NotifyModule
		case 'n':
			f |= NotifyNew
		default:
			return 0, false
		}
	}
	return f, true
}

// String is the classes as CONFIG GET shows them (Redis'
// keyspaceEventsFlagsToString): "A" or the letters, then K, E, m.
func (f NotifyClass) String() string {
	var b []byte
	if f&NotifyAll == NotifyAll {
		b = append(b, 'A')
	} else {
		for _, l := range [...]struct {
			c NotifyClass
			b byte
		}{{NotifyGeneric, 'g'}, {NotifyString, '$'}, {NotifyList, 'l'}, {NotifySet, 's'}, {NotifyHash, 'h'},
			{NotifyZSet, 'z'}, {NotifyExpired, 'x'}, {NotifyEvicted, 'e'}, {NotifyStream, 't'}, {NotifyModule, 'd'}, {NotifyNew, 'n'}} {
			if f&l.c != 0 {
				b = append(b, l.b)
			}
		}
	}
	if f&NotifyKeyspace != 0 {
		b = append(b, 'K')
	}
	if f&NotifyKeyevent != 0 {
		b = append(b, 'E')
	}
	if f&NotifyKeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}

// Notifier publishes one keyspace event: event happened to key in database
// db. by is the context of the command that caused it (nil for expiry and
// eviction), so a subscriber running that very command gets the message
// in its reply stream, before the reply, as Redis. key and event are valid
// for the call only. It is called by the holder of the key's shard and
// must not wait on any client.
type Notifier func(by *Ctx, db int, event string, key []byte)

// notifyState is the Env's notifications: the classes on (0: off) and
// where events go.
type notifyState struct {
	classes atomic.Uint32
	fn      atomic.Pointer[Notifier]
}

// SetNotify sets the classes published (0: none) and the Notifier that
// publishes them. Any time: a command running meanwhile publishes under
// the old classes or the new.
func (e *Env) SetNotify(classes NotifyClass, fn Notifier) {
	if fn != nil {
		e.notify.fn.Store(&fn)
	}
	e.notify.classes.Store(uint32(classes))
}

// publish sends the event if its class is on: the whole cost when off is
// the load and the test.
func (e *Env) publish(by *Ctx, class NotifyClass, event string, db int, key []byte) {
	on := NotifyClass(e.notify.classes.Load())
	if on&class == 0 || on&(NotifyKeyspace|NotifyKeyevent) == 0 {
		return
	}
	if fn := e.notify.fn.Load(); fn != nil {
		(*fn)(by, db, event, key)
	}
}

// Notify publishes event for key of the command's database, if class is
// on (Redis' notifyKeyspaceEvent(class, event, key, c->db->id)). Handlers
// call it where Redis' command does, with Redis' event name.
func (c *Ctx) Notify(class NotifyClass, event string, key []byte) {
	if c.env == nil || c.env.notify.classes.Load()&uint32(class) == 0 {
		return // an unbound context (a batch a test built) has no keyspace to tell
	}
	c.env.publish(c, class, event, c.DB, key)
}

// NotifyIn is Notify for a key of database db (COPY ... DB, MOVE).
func (c *Ctx) NotifyIn(db int, class NotifyClass, event string, key []byte) {
	if c.env == nil || c.env.notify.classes.Load()&uint32(class) == 0 {
		return
	}
	c.env.publish(c, class, event, db, key)
}

// NotifyOn reports whether class is published: for a handler that must
// do work (format a key) only to notify.
func (c *Ctx) NotifyOn(class NotifyClass) bool {
	return c.env != nil && c.env.notify.classes.Load()&uint32(class) != 0
}

// notifyKey publishes an event the keyspace itself causes: expired or
// evicted for a key it removed on its own, new for a key it added (Redis'
// dbAdd). These go to every subscriber's mailbox, the running command's
// client's too (see Notifier).
func (d *DB) notifyKey(class NotifyClass, event string, key string) {
	st := d.owner
	if st == nil || st.env.notify.classes.Load()&uint32(class) == 0 {
		return
	}
	st.env.publish(nil, class, event, d.num, []byte(key))
}
