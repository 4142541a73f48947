package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Headers of every POST: the event's kind and ID (a receiver routes by the
// one and drops a repeat by the other), and, when signed, the timestamp and
// signature: HMAC-SHA256(secret, timestamp + "." + body) in hex after
// "sha256=". They are the drift webhooks' headers.
const (
	HeaderEvent     = "X-Kumo-Event"
	HeaderEventID   = "X-Kumo-Event-Id"
	HeaderTimestamp = "X-Kumo-Timestamp"
	HeaderSignature = "X-Kumo-Signature"
)

// Message is one POST to a sink, unsigned (see Sign).
type Message struct {
	Header map[string]string
	Body   []byte
}

// Render is e as the sink of kind wants it: the Event as JSON for a generic
// webhook, a Slack message for Slack.
func Render(kind Kind, e Event) (Message, error) {
	var body []byte
	var err error
	switch kind {
	case KindWebhook:
		body, err = json.Marshal(e)
	case KindSlack:
		body, err = json.Marshal(SlackMessageOf(e))
	default:
		return Message{}, fmt.Errorf("sink kind %q: want %q or %q", kind, KindWebhook, KindSlack)
	}
	if err != nil {
		return Message{}, err
	}
	return Message{Body: body, Header: map[string]string{
		"Content-Type": "application/json",
		HeaderEvent:    e.Event,
		HeaderEventID:  e.ID,
	}}, nil
}

// Sign sets the timestamp (Unix seconds at now) and signature headers; done
// per attempt, so a retried POST carries a fresh timestamp.
func (m Message) Sign(secret []byte, now time.Time) {
	ts := strconv.FormatInt(now.Unix(), 10)
	m.Header[HeaderTimestamp] = ts
	m.Header[HeaderSignature] = "sha256=" + Signature(secret, ts, m.Body)
}

// Signature is the hex HMAC-SHA256 of timestamp + "." + body.
func Signature(secret []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// SlackMessage is the body of a POST to a Slack incoming webhook: `text` is
// the notification's fallback and `blocks` the message shown (Slack's Block
// Kit: section, context and header blocks with mrkdwn or plain_text text
// objects).
type SlackMessage struct {
	Text   string       `json:"text"`
	Blocks []SlackBlock `json:"blocks,omitempty"`
}

// SlackBlock is a block of the kinds kumo sends: a header (plain_text), a
// section (mrkdwn text, fields) or a context (mrkdwn elements).
type SlackBlock struct {
	Type     string      `json:"type"`
	Text     *SlackText  `json:"text,omitempty"`
	Fields   []SlackText `json:"fields,omitempty"`
	Elements []SlackText `json:"elements,omitempty"`
}

// SlackText is a text object.
type SlackText struct {
	Type string `json:"type"` // "mrkdwn" or "plain_text"
	Text string `json:"text"`
}

// Slack's limits: a header's text, a section's text and a field, the
// fields of a section, the message's fallback.
const (
	slackHeaderMax  = 150
	slackSectionMax = 3000
	slackFieldMax   = 2000
	slackFieldsMax  = 10
	slackTextMax    = 3000
)

var slackTitle = map[string]string{
	AwaitingApproval: "awaits approval", Succeeded: "succeeded", Failed: "failed", Cancelled: "was cancelled",
}

// SlackMessageOf is e as a Slack message: a header, the summary, the facts
// as fields, how to approve, and the event's ID in a context line.
func SlackMessageOf(e Event) SlackMessage {
	title := fmt.Sprintf("%s %s/%s %s", e.Operation, e.Project, e.Workspace, e.Event)
	if t, ok := slackTitle[e.Event]; ok {
		title = fmt.Sprintf("%s %s/%s %s", e.Operation, e.Project, e.Workspace, t)
	}
	var fields []SlackText
	field := func(name, value string) {
		if value != "" && len(fields) < slackFieldsMax {
			fields = append(fields, mrkdwn(truncate("*"+name+"*\n"+slackEscape(value), slackFieldMax)))
		}
	}
	if e.Stack != "" {
		field("Stack", e.Stack)
	}
	if e.Revision > 0 {
		field("Revision", strconv.Itoa(e.Revision))
	}
	if e.Plan != nil {
		field("Plan", e.Plan.String())
		field("Digest", "`"+shortDigest(e.Plan.Digest)+"`")
	}
	field("Started by", e.StartedBy)
	field("Cancelled by", e.CancelledBy)
	field("Run", e.RunID)
	blocks := []SlackBlock{
		{Type: "header", Text: &SlackText{Type: "plain_text", Text: truncate(title, slackHeaderMax)}},
		{Type: "section", Text: ptr(mrkdwn(truncate(slackEscape(e.Summary), slackSectionMax)))},
	}
	if e.Error != "" {
		blocks = append(blocks, SlackBlock{Type: "section", Text: ptr(mrkdwn("*Error*\n```" + truncate(slackEscape(e.Error), slackSectionMax-20) + "```"))})
	}
	if d := e.Drift; d != nil && len(d.Resources) > 0 {
		lines := make([]string, 0, len(d.Resources))
		for _, r := range d.Resources {
			lines = append(lines, fmt.Sprintf("• `%s` %s", slackEscape(r.ID), r.Status))
		}
		blocks = append(blocks, SlackBlock{Type: "section", Text: ptr(mrkdwn(truncate(strings.Join(lines, "\n"), slackSectionMax)))})
	}
	if len(fields) > 0 {
		blocks = append(blocks, SlackBlock{Type: "section", Fields: fields})
	}
	if a := e.Approve; a != nil {
		s := "*Approve*\n`" + slackEscape(a.Command) + "`"
		if a.URL != "" {
			s += "\nor POST " + slackEscape(a.URL) + " with the digest"
		}
		blocks = append(blocks, SlackBlock{Type: "section", Text: ptr(mrkdwn(truncate(s, slackSectionMax)))})
	}
	blocks = append(blocks, SlackBlock{Type: "context", Elements: []SlackText{mrkdwn("kumo event " + e.Event + " · id " + e.ID)}})
	return SlackMessage{Text: truncate(slackEscape(e.Summary), slackTextMax), Blocks: blocks}
}

func mrkdwn(s string) SlackText { return SlackText{Type: "mrkdwn", Text: s} }

func ptr[T any](v T) *T { return &v }

// slackEscape escapes the three characters Slack reads as markup: a name
// or an error holding "<!channel>" must not ping a channel.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
