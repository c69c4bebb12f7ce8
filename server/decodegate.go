package server

import (
	"bytes"
	"context"
	"errors"

	"github.com/ratelab/ratelab/policy"
)

// maxPolicyDecodes bounds the policy documents the server decodes at
// once. Package policy's pre-scan refuses the YAML bombs it can tell
// before the tokenizer runs, following the tokenizer's rules, and a
// count that follows none (roughTokens) bounds what it misjudges: such a
// document still makes the tokenizer keep up to about 20 MB of tokens
// (18 MB measured for 62 KB of brackets after a misread header). Two at
// once bound that at about 40 MB, and the tokenizer's CPU at two cores'
// worth, whatever the documents; the others wait their turn (a decode
// takes milliseconds) or give up when their request ends.
const maxPolicyDecodes = 2

// policyDecodes holds a token for each decode under way.
var policyDecodes = make(chan struct{}, maxPolicyDecodes)

// decodeWaits, when set (by a test), is called when a decode has to wait
// for its turn.
var decodeWaits func()

// decodePolicy is policy.Decode of data in its turn among the server's
// decodes; it returns ctx.Err() if ctx ends first.
func decodePolicy(ctx context.Context, data []byte) (policy.Policy, error) {
	if err := ctx.Err(); err != nil {
		return policy.Policy{}, err
	}
	select {
	case policyDecodes <- struct{}{}:
	default:
		if decodeWaits != nil {
			decodeWaits()
		}
		select {
		case policyDecodes <- struct{}{}:
		case <-ctx.Done():
			return policy.Policy{}, ctx.Err()
		}
	}
	defer func() { <-policyDecodes }()
	return policy.Decode(bytes.NewReader(data))
}

// ended reports whether err is a request's context ending (the client
// left, the deadline passed), not a problem with what it sent.
func ended(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
