// Package notify is what kumo tells people about its runs: the events (a run
// awaiting approval, succeeded, failed or cancelled; a drift check's changes
// of drift state), the ID a receiver deduplicates them by, their bodies for a
// generic signed JSON webhook or a Slack-compatible incoming webhook, and the
// sinks a workspace's administrators or the worker's operator configure.
//
// It decides nothing about when an event is sent (the workflows do) and does
// no I/O (an activity POSTs what Render returns), so it has no Temporal in it.
package notify
