package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sqsloop/sqsloop/jobstate"
)

// rateKeyPrefix ("sqsloop.rate:") is put in front of a rate limit's key in the table, so
// that it never meets a Record's key (the checkpoint and idempotency
// middlewares prefix theirs with their own names).
const rateKeyPrefix = "sqsloop.rate:"

// aTAT is a rate key's item's theoretical arrival time (jobstate.Rate), in
// Unix microseconds.
const aTAT = "tat"

// rateTTL is how long after its TAT has passed a rate key's item is left
// to DynamoDB's Time to Live ("ttl").
const rateTTL = time.Hour

// The conditions of a take (jobstate.Rate.TakeAt): a busy key (TAT ahead
// of now, within maxWait + τ) moves its TAT on by Interval; an idle one
// (absent, or TAT passed) starts again from now.
const (
	condBusy = "#t > :now AND #t <= :lim"
	condIdle = "attribute_not_exists(#k) OR #t <= :now"
)

// takeTries bounds a take's writes: a guess of busy or idle that the item
// refuses is followed by the other (the item changed since it was seen),
// and that one may be refused again by a take from elsewhere.
const takeTries = 4

// Take implements jobstate.RateLimiter: one conditional write while the
// key is as this Store last saw it (see the package doc).
func (s *Store) Take(ctx context.Context, key string, r jobstate.Rate, maxWait time.Duration) (jobstate.Grant, error) {
	if err := jobstate.ValidateTake(key, r, maxWait); err != nil {
		return jobstate.Grant{}, err
	}
	k := rateKeyPrefix + key
	now := time.Now()
	busy := s.turns.get(k).After(now)
	for range takeTries {
		var tat time.Time
		var err error
		if busy {
			tat, err = s.takeBusy(ctx, k, r, now, maxWait)
		} else {
			tat, err = s.takeIdle(ctx, k, r, now)
		}
		var refused *refusedTake
		switch {
		case errors.As(err, &refused):
		case err != nil:
			return jobstate.Grant{}, err
		default:
			s.turns.put(k, tat)
			return jobstate.Grant{OK: true, Wait: max(tat.Add(-r.Interval).Sub(now)-r.Tolerance(), 0)}, nil
		}
		old, err := s.standing(ctx, k, refused.item)
		if err != nil {
			return jobstate.Grant{}, err
		}
		s.turns.put(k, old)
		switch _, g := r.TakeAt(old, now, maxWait); {
		case !g.OK:
			return g, nil
		case old.After(now):
			busy = true
		default:
			busy = false
		}
	}
	return jobstate.Grant{}, fmt.Errorf("dynamostore: table %s: rate key %q: %d takes refused by takes from elsewhere", s.table, key, takeTries)
}

// refusedTake is a take's write whose condition failed, with the item
// standing when DynamoDB returned it.
type refusedTake struct {
	item map[string]types.AttributeValue
}

func (*refusedTake) Error() string { return "the take's condition failed" }

// takeBusy moves a busy key's TAT on by Interval, where it is ahead of now
// and a turn within maxWait: UpdateItem, returning the new TAT.
func (s *Store) takeBusy(ctx context.Context, k string, r jobstate.Rate, now time.Time, maxWait time.Duration) (time.Time, error) {
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.table,
		Key:                      map[string]types.AttributeValue{aKey: &types.AttributeValueMemberS{Value: k}},
		UpdateExpression:         aws.String("SET #t = #t + :i, #x = :ttl"),
		ConditionExpression:      aws.String(condBusy),
		ExpressionAttributeNames: map[string]string{"#t": aTAT, "#x": aTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":i": num(r.Interval.Microseconds()), ":now": num(now.UnixMicro()),
			":lim": num(now.Add(r.Tolerance() + maxWait).UnixMicro()),
			// At least rateTTL after the new TAT, which is at most lim + Interval.
			":ttl": num(now.Add(r.Tolerance()+maxWait+r.Interval+rateTTL).Unix() + 1),
		},
		ReturnValues:                        types.ReturnValueUpdatedNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		return time.Time{}, s.refusedOr(err)
	}
	return tatOf(out.Attributes)
}

// takeIdle starts an idle key (absent, or its TAT passed) again from now:
// PutItem of TAT now + Interval.
func (s *Store) takeIdle(ctx context.Context, k string, r jobstate.Rate, now time.Time) (time.Time, error) {
	tat := now.Add(r.Interval)
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: rateItem(k, tat),
		ConditionExpression:                 aws.String(condIdle),
		ExpressionAttributeNames:            map[string]string{"#k": aKey, "#t": aTAT},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":now": num(now.UnixMicro())},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		return time.Time{}, s.refusedOr(err)
	}
	return time.UnixMicro(tat.UnixMicro()), nil
}

// Pause implements jobstate.RateLimiter: one conditional PutItem, which a
// TAT further off refuses (nothing to do then).
func (s *Store) Pause(ctx context.Context, key string, r jobstate.Rate, until time.Time) error {
	if err := jobstate.ValidatePause(key, r, until, time.Now()); err != nil {
		return err
	}
	k := rateKeyPrefix + key
	tat := r.PauseAt(time.Time{}, until)
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: rateItem(k, tat),
		ConditionExpression:       aws.String("attribute_not_exists(#k) OR #t < :t"),
		ExpressionAttributeNames:  map[string]string{"#k": aKey, "#t": aTAT},
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": num(tat.UnixMicro())},
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return nil
	}
	if err == nil {
		s.turns.put(k, tat)
	}
	return s.fail(err)
}

// refusedOr makes a failed condition a *refusedTake, and any other error
// the store's.
func (s *Store) refusedOr(err error) error {
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return &refusedTake{item: cf.Item}
	}
	return s.fail(err)
}

// standing is the TAT of key's item that refused a take: from the item
// DynamoDB returned, else read (zero: none).
func (s *Store) standing(ctx context.Context, k string, item map[string]types.AttributeValue) (time.Time, error) {
	if len(item) == 0 {
		out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{aKey: &types.AttributeValueMemberS{Value: k}}})
		if err != nil {
			return time.Time{}, s.fail(err)
		}
		if item = out.Item; len(item) == 0 {
			return time.Time{}, nil
		}
	}
	return tatOf(item)
}

func rateItem(k string, tat time.Time) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		aKey: &types.AttributeValueMemberS{Value: k}, aTAT: num(tat.UnixMicro()),
		aTTL: num(tat.Add(rateTTL).Unix()),
	}
}

func tatOf(it map[string]types.AttributeValue) (time.Time, error) {
	v, ok := it[aTAT].(*types.AttributeValueMemberN)
	if !ok {
		return time.Time{}, errors.New("dynamostore: a rate key's item without a numeric tat: an item that no Store wrote")
	}
	us, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("dynamostore: a rate key's tat %q: %w", v.Value, err)
	}
	return time.UnixMicro(us), nil
}

// turnCache keeps the TAT each rate key had when this Store last saw it,
// to choose a take's write; at most maxTurns keys, forgotten all at once
// beyond (a forgotten key costs one guess, not an error). Safe for
// concurrent use.
type turnCache struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// maxTurns bounds the keys a turnCache keeps: 10,000.
const maxTurns = 10_000

func (c *turnCache) get(k string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *turnCache) put(k string, tat time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxTurns {
		c.m = make(map[string]time.Time)
	}
	c.m[k] = tat
}
