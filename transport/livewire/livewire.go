// Package livewire is the live channel's wire format: the close codes a
// connection ends with and the messages a server and a client exchange over
// it (docs/live-protocol.md). It holds shapes only: the room builds them and
// the transport sends and reads them, and a client in another module (the
// load tool) reads the same shapes.
package livewire

import (
	"encoding/json"

	"corkboard/board"
)

// Close codes a subscriber is dropped with (WebSocket close codes; see
// docs/live-protocol.md).
const (
	// CloseNormal ends a subscription its own client left.
	CloseNormal = 1000
	// CloseGoingAway is the server shutting down: reconnect later.
	CloseGoingAway = 1001
	// CloseSessionEnded is the session the connection was opened with
	// ended: logged out or expired. The client logs in again.
	CloseSessionEnded = 4001
	// CloseForbidden is access to the board withdrawn (invite removed).
	CloseForbidden = 4003
	// CloseResync is a subscriber that fell behind: its queue filled up.
	// The client pulls what it missed and reconnects.
	CloseResync = 4008
	// CloseTooManyMessages is a connection that sent messages faster than
	// its budget, or its person's (hub.Lease.AllowMessage). The client
	// reconnects after a backoff.
	CloseTooManyMessages = 4029
)

// Message types of the live protocol (the "type" field).
const (
	TypeHello   = "hello"
	TypeChanges = "changes"
	TypeAck     = "ack"
	TypeError   = "error"
	TypeJoin    = "join"
	TypeLeave   = "leave"
	TypePointer = "pointer"
	TypePush    = "push"
	// TypeEditing says which note a connection has open in its editor
	// ("" for none): sent by a client, relayed to the others.
	TypeEditing = "editing"
	// TypeEvents carries the merge events of a push applied on another
	// node (on the node that applied it they ride in its changes message).
	TypeEvents = "events"
	// TypeAccess tells a connection that its access to the board changed
	// while it is open (a plan change): what the board guard now answers.
	TypeAccess = "access"
	// Presence and following (docs/live-protocol.md, "Who is here").
	// TypePresence is the room's coalesced presence batch; TypeWho a
	// client's request for a page of who is here and its answer;
	// TypeActive a client's activity without a pointer; TypeView a
	// client's viewport and, to its followers, the relayed view;
	// TypeViewOnce a request for someone's latest view, once; TypeFollow
	// starts or ends following; TypeSummon brings everyone to the owner.
	TypePresence = "presence"
	TypeWho      = "who"
	TypeActive   = "active"
	TypeView     = "view"
	TypeViewOnce = "view?"
	TypeFollow   = "follow"
	TypeSummon   = "summon"
)

// PresenceBatch is the presence changes of one tick in a room: who
// joined (entries), left, went idle or came back (IDs). Lists are left
// out when empty; More says they were cut (the client asks who when it
// shows the list). Count is how many connections the board shows now,
// the receiving one included unless it is hidden.
type PresenceBatch struct {
	Type   string     `json:"type"`
	Joined []Presence `json:"joined,omitempty"`
	Left   []string   `json:"left,omitempty"`
	Idle   []string   `json:"idle,omitempty"`
	Active []string   `json:"active,omitempty"`
	More   bool       `json:"more,omitempty"`
	Count  int        `json:"count"`
}

// WhoAnswer is a page of who is here, after the request's "after" ID;
// Next is the ID to ask after for the next page, "" at the end.
type WhoAnswer struct {
	Type    string     `json:"type"`
	Present []Presence `json:"present"`
	Next    string     `json:"next"`
}

// ViewMessage is a connection's viewport centre (board coordinates) and
// zoom, sent to its followers (and to a view? request).
type ViewMessage struct {
	Type string `json:"type"`
	Presence
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	Zoom float64 `json:"zoom"`
}

// FollowEnded tells a follower that the connection it followed left.
type FollowEnded struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Ended string `json:"ended"`
}

// SummonMessage is the board owner bringing everyone to their view.
type SummonMessage struct {
	Type string `json:"type"`
	Presence
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	Zoom float64 `json:"zoom"`
}

// AccessMessage is the access a connection's person has now, pushed when
// it changes without the invitation changing (docs/live-protocol.md,
// "access"); a withdrawn invitation closes the socket with 4003 instead.
type AccessMessage struct {
	Type    string `json:"type"`
	CanEdit bool   `json:"canEdit"`
}

// Presence is one connection on a board: who it is and its colour.
type Presence struct {
	// ID is the connection's ID; one person with two tabs is two connections.
	ID    string `json:"id"`
	Email string `json:"email"`
	Color string `json:"color"`
	// Editing is the note the connection has open in its editor, in the
	// hello's list of who is here; omitted when none.
	Editing string `json:"editing,omitempty"`
	// Idle is true when the connection sent no activity for
	// rooms.IdleAfter (hello, presence and who entries); omitted when
	// active.
	Idle bool `json:"idle,omitempty"`
}

// You is the hello message's description of the receiving connection.
type You struct {
	Presence
	CanEdit bool `json:"canEdit"`
}

// Hello is the first message of every live connection.
type Hello struct {
	Type          string `json:"type"`
	ServerVersion int64  `json:"serverVersion"`
	You           You    `json:"you"`
	// Present is a page of the others on the board (at most
	// rooms.HelloPresent, in who order), PresentCount how many others
	// there are in all, and PresentMore whether the page was cut: the
	// client asks for the rest with who.
	Present      []Presence `json:"present"`
	PresentCount int        `json:"presentCount"`
	PresentMore  bool       `json:"presentMore,omitempty"`
}

// ChangesMessage is a pull answer sent over the live channel: the rows
// changed after Since, up to ServerVersion. A fan-out of one push has Since =
// ServerVersion-1 and From = the pushing connection ("" for a REST push).
type ChangesMessage struct {
	Type  string `json:"type"`
	From  string `json:"from,omitempty"`
	Since int64  `json:"since"`
	*board.Changes
	// Events tells what the push's merges overwrote (docs/live-protocol.md,
	// "changes"); left out when nothing.
	Events []Event `json:"events,omitempty"`
}

// Event is a persist.MergeEvent on the wire: a merge of row ID replaced
// something the change at Version had committed (an overlap of lines, or a
// deletion the edit undid); LogKey is the changelog entry holding it.
type Event struct {
	Kind    string `json:"kind"`
	Table   string `json:"table"`
	ID      string `json:"id"`
	Version int64  `json:"version"`
	LogKey  string `json:"logKey,omitempty"`
}

// EventsMessage is TypeEvents: merge events of a push another node applied.
type EventsMessage struct {
	Type   string  `json:"type"`
	Events []Event `json:"events"`
}

// Ack answers a push made over the live channel.
type Ack struct {
	Type          string `json:"type"`
	ID            string `json:"id"`
	ServerVersion int64  `json:"serverVersion"`
	// Replayed is true when the idempotency key had been applied before.
	Replayed bool `json:"replayed,omitempty"`
}

// ErrorMessage is a failed client message, with the status the same request
// would get over HTTP.
type ErrorMessage struct {
	Type   string `json:"type"`
	ID     string `json:"id,omitempty"`
	Status int    `json:"status"`
	Error  string `json:"error"`
	Field  string `json:"field,omitempty"`
	// Limit is the stored limit a push would pass (board.Limits), as in
	// the HTTP answer.
	Limit int64 `json:"limit,omitempty"`
}

// PresenceMessage announces a connection joining or leaving.
type PresenceMessage struct {
	Type string `json:"type"`
	Presence
}

// PointerMessage is a connection's pointer position, relayed to the others.
type PointerMessage struct {
	Type string `json:"type"`
	Presence
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// EditingMessage is a connection opening a note's editor (NoteID) or
// closing it (NoteID ""), relayed to the others.
type EditingMessage struct {
	Type string `json:"type"`
	Presence
	NoteID string `json:"noteId"`
}

// EncodeChanges encodes a changes message.
func EncodeChanges(ch *board.Changes, since int64, from string) ([]byte, error) {
	return json.Marshal(ChangesMessage{Type: TypeChanges, From: from, Since: since, Changes: ch})
}
