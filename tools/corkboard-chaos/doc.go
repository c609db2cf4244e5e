// Command corkboard-chaos proves that several Corkboard nodes sharing one
// PostgreSQL database lose nothing under faults: it starts the nodes,
// runs pushing clients (REST, idempotency keys, retries on any node) and
// live watchers (WebSocket, reconnecting with their version) while it
// kills, stops and resumes nodes, ends the nodes' database connections and
// restarts PostgreSQL, then checks the outcome from outside the nodes:
// straight from PostgreSQL and through a full pull from every node
// (docs/chaos.md). It exits 1 on any violation.
//
// With -workload converge it runs issue 20's test instead: live and REST
// clients edit a handful of notes together, with offline windows and
// pushes that carry baseVersion, against one node on bbolt or three on
// PostgreSQL (-backend), with kill -9 of a node meanwhile; then every
// client's copy must equal the server's, and every line any client typed
// must be in its note or its changelog unless a client removed it.
//
// It needs a Unix (signals, pg_ctlcluster); elsewhere it only says so.
package main
