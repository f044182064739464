// Package status owns the status document: the one JSON answer that both GET
// /status/json and STATUS JSON give (SPEC Part B, "JSON documents"). It holds
// the document's types, the health verdict (Assess) and the renderer
// (Render); the collector that fills a Document from live state is netloop's
// (netloop/status.go), since only it can see the loops and the shards.
//
// # Shape
//
// Keys are snake_case; counts are JSON integers; rates and percentages are
// numbers rounded to two decimals; every time is a Time, {"unix": seconds,
// "iso": "2006-01-02T15:04:05Z"}, at one-second precision, so two renderings
// of the same instant are byte-identical. The sections are, in order: svc,
// health, cluster, clients, memory, persistence, shards, keyspace, commands,
// hot_shards. Lists are never null (an empty list is []).
//
// # Unknown is not zero
//
// A shard that does not answer the collector's control message within its
// deadline is reported with "state": "late" and null keys, expires and
// memory_bytes; the keyspace section then says it is incomplete and names the
// late shards, and health is degraded. Nothing is silently zeroed.
//
// # Determinism
//
// Render is a pure function of the Document: struct fields in declaration
// order, no maps, floats rounded before rendering. It uses goccy/go-json
// behind this one function, so swapping the encoder touches nothing else.
package status
