// Package dynamostore is a jobstate.Store in an Amazon DynamoDB table, for
// checkpoints and idempotency keys (packages checkpoint and idempotency)
// shared by a fleet on AWS that outgrows one database. Claims are
// conditional writes, as Powertools for AWS Lambda's idempotency utility
// makes them: a PutItem whose ConditionExpression holds the rule of a
// claim (jobstate.Record.Claimable), which DynamoDB applies atomically per
// item, so that of two processes claiming one key at once one wins. It is
// the only jobstate package that imports service/dynamodb.
//
// The table: a partition key "key" of type String, no sort key (CreateTable
// makes one). Each item holds "state", "owner", "value" (Binary),
// "lease_until" and "expires_at" (Unix microseconds), and "ttl" (Unix
// seconds, only when the record expires), the attribute to name in the
// table's Time to Live setting (EnableTimeToLive): DynamoDB then deletes
// expired items, within days; until then the Store treats them as absent.
//
// It is also a jobstate.RateLimiter, its keys in the same table under the
// prefix "sqsloop.rate:", each an item holding "tat" (Unix microseconds),
// with Time to Live left to the table (a key whose turn has passed is as
// good as absent; "ttl" is set an hour after it). A take is one
// conditional write: an UpdateItem adding Interval to a TAT still ahead
// (a busy key), or a PutItem of a new one where the TAT has passed (an
// idle key), chosen from the TAT the Store last saw; when that guess is
// wrong (the key turned busy or idle since), the refused write returns
// the item and the other write follows: two requests.
//
// Cost: every Store method is one request (Get a strongly consistent
// GetItem: one read unit per 4 KB; Put and Claim a PutItem, Delete a
// DeleteItem: one write unit per KB; a take or a pause one write unit); a
// refused Claim, owner's Delete or take reads the item once more when
// DynamoDB did not return it.
package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
)

// Client is the part of *dynamodb.Client the Store calls, in the SDK's own
// signatures: *dynamodb.Client fits, and so does a fake.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// Store is a jobstate.Store in one DynamoDB table. Safe for concurrent use
// (as the client is).
type Store struct {
	client Client
	table  string
	turns  turnCache // the rate keys' TATs as last seen (rate.go)
}

var (
	_ jobstate.Store       = (*Store)(nil)
	_ jobstate.RateLimiter = (*Store)(nil)
)

// New returns the Store on table (its name or ARN: 3–255 characters, as
// DynamoDB allows) through client.
//
// Errors: an error wrapping sqsloop.ErrInvalidArgument for a nil client or
// a table name out of range. New makes no request: a missing table is
// found at the first call (DynamoDB's ResourceNotFoundException).
func New(client Client, table string) (*Store, error) {
	var errs []error
	if client == nil {
		errs = append(errs, fmt.Errorf("dynamostore: New: client is nil: %w", sqsloop.ErrInvalidArgument))
	}
	if len(table) < 3 || len(table) > 2048 {
		errs = append(errs, fmt.Errorf("dynamostore: New: table %q: %d characters, want 3-255 (a name) or an ARN up to 2048: %w", table, len(table), sqsloop.ErrInvalidArgument))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Store{client: client, table: table}, nil
}

// Attribute names of an item.
const (
	aKey, aState, aOwner, aValue, aLease, aExpires, aTTL = "key", "state", "owner", "value", "lease_until", "expires_at", "ttl"
)

// Get implements jobstate.Store: a strongly consistent GetItem.
func (s *Store) Get(ctx context.Context, key string) (jobstate.Record, error) {
	r, ok, err := s.get(ctx, key)
	switch {
	case err != nil:
		return jobstate.Record{}, err
	case !ok || !r.Live(time.Now()):
		return jobstate.Record{}, fmt.Errorf("jobstate: %q: %w", key, jobstate.ErrNotFound)
	}
	return r, nil
}

func (s *Store) get(ctx context.Context, key string) (jobstate.Record, bool, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{aKey: &types.AttributeValueMemberS{Value: key}}})
	if err != nil {
		return jobstate.Record{}, false, s.fail(err)
	}
	if len(out.Item) == 0 {
		return jobstate.Record{}, false, nil
	}
	r, err := record(out.Item)
	return r, err == nil, err
}

// Put implements jobstate.Store: a PutItem.
func (s *Store) Put(ctx context.Context, rec jobstate.Record) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item(rec)})
	return s.fail(err)
}

// claimTries bounds Claim's attempts: a refused claim whose item
// DynamoDB did not return is read, and may be gone by then; the claim is
// then tried again.
const claimTries = 3

// The conditions, written once: an item that counts as absent, and one a
// claim may replace (jobstate.Record.Claimable).
const (
	condExpired   = "(#e <> :zero AND #e <= :now)"
	condClaimable = "attribute_not_exists(#k) OR " + condExpired + " OR (#s = :inprog AND (#l <= :now OR #o = :owner))"
	condOwned     = "attribute_not_exists(#k) OR " + condExpired + " OR (#s = :inprog AND #o = :owner)"
)

// Claim implements jobstate.Store: a PutItem on the condition that no live
// item stands or the one standing is claimable, asking for the item that
// failed the condition (ReturnValuesOnConditionCheckFailure).
func (s *Store) Claim(ctx context.Context, rec jobstate.Record) (jobstate.Record, error) {
	if err := rec.ValidateClaim(); err != nil {
		return jobstate.Record{}, err
	}
	for range claimTries {
		now := time.Now()
		_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item(rec),
			ConditionExpression:                 aws.String(condClaimable),
			ExpressionAttributeNames:            names(aKey, aExpires, aState, aLease, aOwner),
			ExpressionAttributeValues:           values(now, rec.Owner),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		standing, refused, err := s.refused(ctx, rec.Key, err)
		if !refused {
			return jobstate.Record{}, err
		}
		if err != nil || standing.Key != "" {
			return standing, err
		}
	}
	return jobstate.Record{}, fmt.Errorf("jobstate: %q: %d claims refused by an item gone when read: %w", rec.Key, claimTries, jobstate.ErrClaimed)
}

// Delete implements jobstate.Store: a DeleteItem, on the condition that
// the item is owner's claim or counts as absent when owner is not "".
func (s *Store) Delete(ctx context.Context, key, owner string) error {
	in := &dynamodb.DeleteItemInput{TableName: &s.table, Key: map[string]types.AttributeValue{aKey: &types.AttributeValueMemberS{Value: key}}}
	if owner != "" {
		in.ConditionExpression = aws.String(condOwned)
		in.ExpressionAttributeNames = names(aKey, aExpires, aState, aOwner)
		in.ExpressionAttributeValues = values(time.Now(), owner)
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	_, err := s.client.DeleteItem(ctx, in)
	_, refused, err := s.refused(ctx, key, err)
	if refused && err == nil { // gone since: nothing under key
		return nil
	}
	return err
}

// refused reads a write's error: refused reports a failed condition, with
// the record standing and an error wrapping jobstate.ErrClaimed, or, when
// no live item stands any longer, a zero record and nil; any other error
// is returned as the store's.
func (s *Store) refused(ctx context.Context, key string, err error) (standing jobstate.Record, refused bool, _ error) {
	var cf *types.ConditionalCheckFailedException
	if !errors.As(err, &cf) {
		return jobstate.Record{}, false, s.fail(err)
	}
	var ok bool
	if len(cf.Item) > 0 {
		standing, err = record(cf.Item)
		ok = err == nil
	} else { // a server that does not return the item
		standing, ok, err = s.get(ctx, key)
	}
	switch {
	case err != nil:
		return jobstate.Record{}, true, err
	case !ok || !standing.Live(time.Now()):
		return jobstate.Record{}, true, nil
	}
	return standing, true, fmt.Errorf("jobstate: %q is %s: %w", key, standing.State, jobstate.ErrClaimed)
}

// fail says where an error comes from, and makes an error of access
// (AccessDeniedException, UnrecognizedClientException) match
// sqsloop.ErrAccessDenied, which retrying does not mend.
func (s *Store) fail(err error) error {
	if err == nil {
		return nil
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "AccessDeniedException", "UnrecognizedClientException":
			return fmt.Errorf("dynamostore: table %s: %w: %w", s.table, sqsloop.ErrAccessDenied, err)
		}
	}
	return fmt.Errorf("dynamostore: table %s: %w", s.table, err)
}

func names(ns ...string) map[string]string {
	m := make(map[string]string, len(ns))
	for _, n := range ns {
		m["#"+n[:1]] = n
	}
	return m
}

func values(now time.Time, owner string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		":zero": num(0), ":now": num(now.UnixMicro()),
		":inprog": &types.AttributeValueMemberS{Value: string(jobstate.InProgress)},
		":owner":  &types.AttributeValueMemberS{Value: owner},
	}
}

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func item(r jobstate.Record) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{
		aKey: &types.AttributeValueMemberS{Value: r.Key}, aState: &types.AttributeValueMemberS{Value: string(r.State)},
		aOwner: &types.AttributeValueMemberS{Value: r.Owner},
		aLease: num(micros(r.LeaseUntil)), aExpires: num(micros(r.ExpiresAt)),
	}
	if len(r.Value) > 0 {
		it[aValue] = &types.AttributeValueMemberB{Value: r.Value}
	}
	if !r.ExpiresAt.IsZero() {
		it[aTTL] = num((r.ExpiresAt.UnixMicro() + 999_999) / 1_000_000) // DynamoDB's TTL reads whole seconds: not before ExpiresAt
	}
	return it
}

func record(it map[string]types.AttributeValue) (jobstate.Record, error) {
	var r jobstate.Record
	var errs []error
	str := func(name string) string {
		v, ok := it[name].(*types.AttributeValueMemberS)
		if !ok {
			errs = append(errs, fmt.Errorf("attribute %q is not a string", name))
			return ""
		}
		return v.Value
	}
	tm := func(name string) time.Time {
		v, ok := it[name].(*types.AttributeValueMemberN)
		if !ok {
			errs = append(errs, fmt.Errorf("attribute %q is not a number", name))
			return time.Time{}
		}
		us, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil || us == 0 {
			errs = append(errs, err)
			return time.Time{}
		}
		return time.UnixMicro(us)
	}
	r.Key, r.State, r.Owner = str(aKey), jobstate.State(str(aState)), str(aOwner)
	r.LeaseUntil, r.ExpiresAt = tm(aLease), tm(aExpires)
	if v, ok := it[aValue].(*types.AttributeValueMemberB); ok {
		r.Value = v.Value
	}
	if err := errors.Join(errs...); err != nil {
		return jobstate.Record{}, fmt.Errorf("dynamostore: an item that no Store wrote: %w", err)
	}
	return r, nil
}
