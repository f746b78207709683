package wire

import awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

// defaultDoer is the HTTP client the SDK would use when none is configured.
func defaultDoer() Doer { return awshttp.NewBuildableClient() }
