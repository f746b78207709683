package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CreateTable creates table (on-demand capacity, the key New's Store
// uses) and waits up to 5 minutes for it to be active; then call
// EnableTimeToLive. A table that exists is left as it is and is not an
// error. For setup and tests; infrastructure as code makes the same table
// in production.
//
// Errors: DynamoDB's (wrapped), ctx's.
func CreateTable(ctx context.Context, client *dynamodb.Client, table string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &table,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(aKey), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(aKey), KeyType: types.KeyTypeHash}},
	})
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dynamostore: creating table %s: %w", table, err)
	}
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 100 * time.Millisecond })
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &table}, 5*time.Minute); err != nil {
		return fmt.Errorf("dynamostore: waiting for table %s: %w", table, err)
	}
	return nil
}

// EnableTimeToLive turns on table's Time to Live on the "ttl" attribute,
// so that DynamoDB deletes expired records (within days of ExpiresAt; the
// Store treats them as absent from ExpiresAt on). Without it expired
// items stay, and cost storage.
//
// Errors: DynamoDB's (wrapped; a ValidationException when it is on
// already), ctx's.
func EnableTimeToLive(ctx context.Context, client *dynamodb.Client, table string) error {
	_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: &table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(aTTL), Enabled: aws.Bool(true)}})
	if err != nil {
		return fmt.Errorf("dynamostore: turning on Time to Live of table %s: %w", table, err)
	}
	return nil
}
