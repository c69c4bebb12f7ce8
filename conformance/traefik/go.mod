module github.com/ratelab/ratelab/conformance/traefik

go 1.26.7

replace github.com/ratelab/ratelab => ../..

// Traefik v3.6.12, not v3.7: v3.7's ACME DNS providers (lego v5, pulled in
// by pkg/middlewares/ratelimiter through observability, tracing and
// config/static) need SDK versions the module proxy refuses (403), and
// v3.6.12's graph is served whole. Every module Traefik v3.6.12's go.mod
// requires is pinned below to the version it names: the main module's
// newer requirements (OpenTelemetry, k8s.io, Google APIs) would otherwise
// be selected and do not build with this Traefik. The ratelab packages the
// test imports build with these versions too.

// Traefik's own go.mod replaces these (replace directives of a
// dependency do not apply to the main module, so they are repeated here),
// and excludes the ambiguous tencentcloud monorepo version.
replace (
	github.com/abbot/go-http-auth => github.com/containous/go-http-auth v0.4.1-0.20200324110947-a37a7636d23e
	github.com/gorilla/mux => github.com/containous/mux v0.0.0-20250523120546-41b6ec3aed59
	github.com/mailgun/minheap => github.com/containous/minheap v0.0.0-20190809180810-6e71eb837595
)

exclude github.com/tencentcloud/tencentcloud-sdk-go v3.0.83+incompatible

require (
	github.com/ratelab/ratelab v0.0.0
	github.com/traefik/paerser v0.2.2
	github.com/traefik/traefik/v3 v3.6.12
)

require (
	cloud.google.com/go/auth v0.20.0 // indirect
	cloud.google.com/go/auth/oauth2adapt v0.2.8 // indirect
	cloud.google.com/go/compute/metadata v0.9.0 // indirect
	github.com/AdamSLevy/jsonrpc2/v14 v14.1.0 // indirect
	github.com/Azure/azure-sdk-for-go v68.0.0+incompatible // indirect
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.21.0 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/azidentity v1.13.1 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.11.2 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/dns/armdns v1.2.0 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns v1.3.0 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resourcegraph/armresourcegraph v0.9.0 // indirect
	github.com/Azure/go-autorest v14.2.0+incompatible // indirect
	github.com/Azure/go-autorest/autorest v0.11.30 // indirect
	github.com/Azure/go-autorest/autorest/adal v0.9.22 // indirect
	github.com/Azure/go-autorest/autorest/azure/auth v0.5.13 // indirect
	github.com/Azure/go-autorest/autorest/azure/cli v0.4.6 // indirect
	github.com/Azure/go-autorest/autorest/date v0.3.0 // indirect
	github.com/Azure/go-autorest/autorest/to v0.4.1 // indirect
	github.com/Azure/go-autorest/logger v0.2.1 // indirect
	github.com/Azure/go-autorest/tracing v0.6.0 // indirect
	github.com/AzureAD/microsoft-authentication-library-for-go v1.6.0 // indirect
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/Masterminds/goutils v1.1.1 // indirect
	github.com/Masterminds/semver/v3 v3.3.1 // indirect
	github.com/Masterminds/sprig/v3 v3.2.3 // indirect
	github.com/Microsoft/go-winio v0.6.2 // indirect
	github.com/VividCortex/gohistogram v1.0.0 // indirect
	github.com/akamai/AkamaiOPEN-edgegrid-golang/v11 v11.1.0 // indirect
	github.com/alibabacloud-go/alibabacloud-gateway-spi v0.0.5 // indirect
	github.com/alibabacloud-go/darabonba-openapi/v2 v2.1.15 // indirect
	github.com/alibabacloud-go/debug v1.0.1 // indirect
	github.com/alibabacloud-go/tea v1.4.0 // indirect
	github.com/alibabacloud-go/tea-utils/v2 v2.0.7 // indirect
	github.com/aliyun/credentials-go v1.4.7 // indirect
	github.com/armon/go-metrics v0.4.1 // indirect
	github.com/aws/aws-sdk-go-v2 v1.41.1 // indirect
	github.com/aws/aws-sdk-go-v2/config v1.32.8 // indirect
	github.com/aws/aws-sdk-go-v2/credentials v1.19.8 // indirect
	github.com/aws/aws-sdk-go-v2/feature/ec2/imds v1.18.17 // indirect
	github.com/aws/aws-sdk-go-v2/internal/configsources v1.4.17 // indirect
	github.com/aws/aws-sdk-go-v2/internal/endpoints/v2 v2.7.17 // indirect
	github.com/aws/aws-sdk-go-v2/internal/ini v1.8.4 // indirect
	github.com/aws/aws-sdk-go-v2/service/ec2 v1.203.1 // indirect
	github.com/aws/aws-sdk-go-v2/service/ecs v1.53.15 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/accept-encoding v1.13.4 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/presigned-url v1.13.17 // indirect
	github.com/aws/aws-sdk-go-v2/service/lightsail v1.50.11 // indirect
	github.com/aws/aws-sdk-go-v2/service/route53 v1.62.1 // indirect
	github.com/aws/aws-sdk-go-v2/service/signin v1.0.5 // indirect
	github.com/aws/aws-sdk-go-v2/service/ssm v1.56.13 // indirect
	github.com/aws/aws-sdk-go-v2/service/sso v1.30.9 // indirect
	github.com/aws/aws-sdk-go-v2/service/ssooidc v1.35.14 // indirect
	github.com/aws/aws-sdk-go-v2/service/sts v1.41.6 // indirect
	github.com/aws/smithy-go v1.24.0 // indirect
	github.com/aziontech/azionapi-go-sdk v0.144.0 // indirect
	github.com/baidubce/bce-sdk-go v0.9.260 // indirect
	github.com/benbjohnson/clock v1.3.5 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/boombuler/barcode v1.0.1 // indirect
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/clbanning/mxj/v2 v2.7.0 // indirect
	github.com/containerd/errdefs v1.0.0 // indirect
	github.com/containerd/errdefs/pkg v0.3.0 // indirect
	github.com/containous/alice v0.0.0-20181107144136-d83ebdd94cbd // indirect
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.7.0 // indirect
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/deepmap/oapi-codegen v1.9.1 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/dimchansky/utfbom v1.1.1 // indirect
	github.com/distribution/reference v0.6.0 // indirect
	github.com/dnsimple/dnsimple-go/v4 v4.0.0 // indirect
	github.com/docker/cli v29.2.1+incompatible // indirect
	github.com/docker/docker v28.5.2+incompatible // indirect
	github.com/docker/go-connections v0.6.0 // indirect
	github.com/docker/go-units v0.5.0 // indirect
	github.com/emicklei/go-restful/v3 v3.13.0 // indirect
	github.com/evanphx/json-patch/v5 v5.9.11 // indirect
	github.com/exoscale/egoscale/v3 v3.1.33 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/fatih/structs v1.1.0 // indirect
	github.com/felixge/httpsnoop v1.1.0 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/fxamacker/cbor/v2 v2.9.2 // indirect
	github.com/gabriel-vasile/mimetype v1.4.3 // indirect
	github.com/ghodss/yaml v1.0.0 // indirect
	github.com/go-acme/alidns-20150109/v4 v4.7.0 // indirect
	github.com/go-acme/esa-20240910/v2 v2.48.0 // indirect
	github.com/go-acme/jdcloud-sdk-go v1.64.0 // indirect
	github.com/go-acme/lego/v4 v4.33.0 // indirect
	github.com/go-acme/tencentclouddnspod v1.3.24 // indirect
	github.com/go-acme/tencentedgdeone v1.3.38 // indirect
	github.com/go-errors/errors v1.0.1 // indirect
	github.com/go-jose/go-jose/v4 v4.1.4 // indirect
	github.com/go-kit/kit v0.13.0 // indirect
	github.com/go-kit/log v0.2.1 // indirect
	github.com/go-logfmt/logfmt v0.5.1 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-openapi/jsonpointer v1.0.2 // indirect
	github.com/go-openapi/jsonreference v1.0.2 // indirect
	github.com/go-openapi/swag v0.29.2 // indirect
	github.com/go-ozzo/ozzo-validation/v4 v4.3.0 // indirect
	github.com/go-playground/locales v0.14.1 // indirect
	github.com/go-playground/universal-translator v0.18.1 // indirect
	github.com/go-playground/validator/v10 v10.23.0 // indirect
	github.com/go-resty/resty/v2 v2.17.1 // indirect
	github.com/go-viper/mapstructure/v2 v2.5.0 // indirect
	github.com/go-zookeeper/zk v1.0.3 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/gofrs/flock v0.13.0 // indirect
	github.com/gofrs/uuid v4.4.0+incompatible // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang-jwt/jwt/v4 v4.5.2 // indirect
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/google/gnostic-models v0.7.1 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/go-github/v28 v28.1.1 // indirect
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/google/s2a-go v0.1.9 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/googleapis/enterprise-certificate-proxy v0.3.15 // indirect
	github.com/googleapis/gax-go/v2 v2.22.0 // indirect
	github.com/gophercloud/gophercloud v1.14.1 // indirect
	github.com/gophercloud/utils v0.0.0-20231010081019-80377eca5d56 // indirect
	github.com/gorilla/mux v1.8.1 // indirect
	github.com/gorilla/websocket v1.5.4-0.20250319132907-e064f32e3674 // indirect
	github.com/gravitational/trace v1.1.16-0.20220114165159-14a9a7dd6aaf // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.30.0 // indirect
	github.com/hashicorp/consul/api v1.26.1 // indirect
	github.com/hashicorp/cronexpr v1.1.2 // indirect
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-hclog v1.6.3 // indirect
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/hashicorp/go-rootcerts v1.0.2 // indirect
	github.com/hashicorp/go-uuid v1.0.3 // indirect
	github.com/hashicorp/go-version v1.8.0 // indirect
	github.com/hashicorp/golang-lru v1.0.2 // indirect
	github.com/hashicorp/hcl v1.0.1-vault-5 // indirect
	github.com/hashicorp/nomad/api v0.0.0-20231213195942-64e3dca9274b // indirect
	github.com/hashicorp/serf v0.10.1 // indirect
	github.com/http-wasm/http-wasm-host-go v0.7.0 // indirect
	github.com/huandu/xstrings v1.5.0 // indirect
	github.com/huaweicloud/huaweicloud-sdk-go-v3 v0.1.187 // indirect
	github.com/iij/doapi v0.0.0-20190504054126-0bbf12d6d7df // indirect
	github.com/imdario/mergo v0.3.16 // indirect
	github.com/influxdata/influxdb-client-go/v2 v2.7.0 // indirect
	github.com/influxdata/influxdb1-client v0.0.0-20200827194710-b269163b24ab // indirect
	github.com/influxdata/line-protocol v0.0.0-20200327222509-2487e7298839 // indirect
	github.com/infobloxopen/infoblox-go-client/v2 v2.10.0 // indirect
	github.com/jonboulle/clockwork v0.5.0 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/json-iterator/go v1.1.13-0.20220915233716-71ac16282d12 // indirect
	github.com/k0kubun/go-ansi v0.0.0-20180517002512-3bf9e2903213 // indirect
	github.com/kolo/xmlrpc v0.0.0-20220921171641-a4b6fa1dd06b // indirect
	github.com/kvtools/consul v1.0.2 // indirect
	github.com/kvtools/etcdv3 v1.0.3 // indirect
	github.com/kvtools/redis v1.2.0 // indirect
	github.com/kvtools/valkeyrie v1.0.0 // indirect
	github.com/kvtools/zookeeper v1.0.2 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/labbsr0x/bindman-dns-webhook v1.0.2 // indirect
	github.com/labbsr0x/goh v1.0.1 // indirect
	github.com/leodido/go-urn v1.4.0 // indirect
	github.com/linode/linodego v1.65.0 // indirect
	github.com/liquidweb/liquidweb-cli v0.6.9 // indirect
	github.com/liquidweb/liquidweb-go v1.6.4 // indirect
	github.com/magiconair/properties v1.8.10 // indirect
	github.com/mailgun/minheap v0.0.0-20170619185613-3dbe6c6bf55f // indirect
	github.com/mailgun/timetools v0.0.0-20141028012446-7e6055773c51 // indirect
	github.com/mailgun/ttlmap v0.0.0-20170619185759-c1c17f74874f // indirect
	github.com/mailru/easyjson v0.9.0 // indirect
	github.com/mattn/go-colorable v0.1.16 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/miekg/dns v1.1.72 // indirect
	github.com/mimuret/golang-iij-dpf v0.9.1 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/go-homedir v1.1.0 // indirect
	github.com/mitchellh/hashstructure v1.0.0 // indirect
	github.com/mitchellh/mapstructure v1.5.1-0.20231216201459-8508981c8b6c // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/moby/docker-image-spec v1.3.1 // indirect
	github.com/moby/sys/atomicwriter v0.1.0 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/namedotcom/go/v4 v4.0.2 // indirect
	github.com/nrdcg/auroradns v1.2.0 // indirect
	github.com/nrdcg/bunny-go v0.1.0 // indirect
	github.com/nrdcg/desec v0.11.1 // indirect
	github.com/nrdcg/dnspod-go v0.4.0 // indirect
	github.com/nrdcg/freemyip v0.3.0 // indirect
	github.com/nrdcg/goacmedns v0.2.0 // indirect
	github.com/nrdcg/goinwx v0.12.0 // indirect
	github.com/nrdcg/mailinabox v0.3.0 // indirect
	github.com/nrdcg/namesilo v0.5.0 // indirect
	github.com/nrdcg/nodion v0.1.0 // indirect
	github.com/nrdcg/oci-go-sdk/common/v1065 v1065.108.2 // indirect
	github.com/nrdcg/oci-go-sdk/dns/v1065 v1065.108.2 // indirect
	github.com/nrdcg/porkbun v0.4.0 // indirect
	github.com/nrdcg/vegadns v0.3.0 // indirect
	github.com/nzdjb/go-metaname v1.0.0 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/ovh/go-ovh v1.9.0 // indirect
	github.com/patrickmn/go-cache v2.1.0+incompatible // indirect
	github.com/pelletier/go-toml/v2 v2.2.4 // indirect
	github.com/peterhellberg/link v1.2.0 // indirect
	github.com/pires/go-proxyproto v0.8.1 // indirect
	github.com/pkg/browser v0.0.0-20240102092130-5ac0b6a4141c // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2 // indirect
	github.com/pquerna/otp v1.5.0 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.74.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/redis/go-redis/v9 v9.23.0 // indirect
	github.com/regfish/regfish-dnsapi-go v0.1.1 // indirect
	github.com/rs/zerolog v1.33.0 // indirect
	github.com/sacloud/api-client-go v0.3.3 // indirect
	github.com/sacloud/go-http v0.1.9 // indirect
	github.com/sacloud/iaas-api-go v1.23.1 // indirect
	github.com/sacloud/packages-go v0.0.12 // indirect
	github.com/sagikazarmark/locafero v0.4.0 // indirect
	github.com/sagikazarmark/slog-shim v0.1.0 // indirect
	github.com/scaleway/scaleway-sdk-go v1.0.0-beta.36 // indirect
	github.com/selectel/domains-go v1.1.0 // indirect
	github.com/selectel/go-selvpcclient/v4 v4.1.0 // indirect
	github.com/shopspring/decimal v1.4.0 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	github.com/softlayer/softlayer-go v1.2.1 // indirect
	github.com/softlayer/xmlrpc v0.0.0-20200409220501-5f089df7cb7e // indirect
	github.com/sony/gobreaker v1.0.0 // indirect
	github.com/sourcegraph/conc v0.3.0 // indirect
	github.com/spf13/afero v1.11.0 // indirect
	github.com/spf13/cast v1.7.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	github.com/spf13/viper v1.18.2 // indirect
	github.com/spiffe/go-spiffe/v2 v2.8.1 // indirect
	github.com/stealthrocket/wasi-go v0.8.0 // indirect
	github.com/stealthrocket/wazergo v0.19.1 // indirect
	github.com/stretchr/objx v0.5.3 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/subosito/gotenv v1.6.0 // indirect
	github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common v1.3.48 // indirect
	github.com/tetratelabs/wazero v1.8.0 // indirect
	github.com/tjfoc/gmsm v1.4.1 // indirect
	github.com/traefik/yaegi v0.16.1 // indirect
	github.com/transip/gotransip/v6 v6.26.1 // indirect
	github.com/ultradns/ultradns-go-sdk v1.8.1-20250722213956-faef419 // indirect
	github.com/unrolled/render v1.0.2 // indirect
	github.com/unrolled/secure v1.0.9 // indirect
	github.com/vinyldns/go-vinyldns v0.9.17 // indirect
	github.com/volcengine/volc-sdk-golang v1.0.237 // indirect
	github.com/vulcand/oxy/v2 v2.0.3 // indirect
	github.com/vulcand/predicate v1.2.0 // indirect
	github.com/vultr/govultr/v3 v3.27.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/yandex-cloud/go-genproto v0.54.0 // indirect
	github.com/yandex-cloud/go-sdk/services/dns v0.0.36 // indirect
	github.com/yandex-cloud/go-sdk/v2 v2.56.0 // indirect
	github.com/youmark/pkcs8 v0.0.0-20240726163527-a2c0da244d78 // indirect
	go.etcd.io/etcd/api/v3 v3.6.8 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.6.8 // indirect
	go.etcd.io/etcd/client/v3 v3.6.8 // indirect
	go.mongodb.org/mongo-driver v1.13.1 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.70.0 // indirect
	go.opentelemetry.io/contrib/propagators/autoprop v0.63.0 // indirect
	go.opentelemetry.io/contrib/propagators/aws v1.38.0 // indirect
	go.opentelemetry.io/contrib/propagators/b3 v1.38.0 // indirect
	go.opentelemetry.io/contrib/propagators/jaeger v1.38.0 // indirect
	go.opentelemetry.io/contrib/propagators/ot v1.38.0 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc v0.17.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp v0.17.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc v1.41.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp v1.41.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.41.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.41.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.41.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk/log v0.17.0 // indirect
	go.opentelemetry.io/otel/sdk/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.opentelemetry.io/proto/otlp v1.11.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/ratelimit v0.3.1 // indirect
	go.uber.org/zap v1.27.1 // indirect
	go.yaml.in/yaml/v2 v2.4.5 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/exp v0.0.0-20251219203646-944ab1f22d93 // indirect
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/oauth2 v0.38.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/term v0.47.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.16.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
	gomodules.xyz/jsonpatch/v2 v2.4.0 // indirect
	google.golang.org/api v0.278.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20261019180522-ce908d29299b // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261012220534-4341edf3f941 // indirect
	google.golang.org/grpc v1.84.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/evanphx/json-patch.v4 v4.13.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/ini.v1 v1.67.1 // indirect
	gopkg.in/ns1/ns1-go.v2 v2.17.2 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	k8s.io/api v0.37.1 // indirect
	k8s.io/apiextensions-apiserver v0.36.3 // indirect
	k8s.io/apimachinery v0.37.1 // indirect
	k8s.io/client-go v0.37.1 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	k8s.io/kube-openapi v0.0.0-20260721132016-d427ff9ee9ad // indirect
	k8s.io/utils v0.0.0-20260707023825-cf1189d6abe3 // indirect
	knative.dev/networking v0.0.0-20241022012959-60e29ff520dc // indirect
	knative.dev/pkg v0.0.0-20241021183759-9b9d535af5ad // indirect
	sigs.k8s.io/gateway-api v1.6.1 // indirect
	sigs.k8s.io/json v0.0.0-20250730193827-2d320260d730 // indirect
	sigs.k8s.io/randfill v1.0.0 // indirect
	sigs.k8s.io/structured-merge-diff/v6 v6.4.2 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)

replace github.com/BurntSushi/toml => github.com/BurntSushi/toml v1.6.0

replace github.com/Masterminds/sprig/v3 => github.com/Masterminds/sprig/v3 v3.2.3

replace github.com/andybalholm/brotli => github.com/andybalholm/brotli v1.2.0

replace github.com/armon/go-socks5 => github.com/armon/go-socks5 v0.0.0-20160902184237-e75332964ef5

replace github.com/aws/aws-sdk-go-v2 => github.com/aws/aws-sdk-go-v2 v1.41.1

replace github.com/aws/aws-sdk-go-v2/config => github.com/aws/aws-sdk-go-v2/config v1.32.8

replace github.com/aws/aws-sdk-go-v2/credentials => github.com/aws/aws-sdk-go-v2/credentials v1.19.8

replace github.com/aws/aws-sdk-go-v2/service/ec2 => github.com/aws/aws-sdk-go-v2/service/ec2 v1.203.1

replace github.com/aws/aws-sdk-go-v2/service/ecs => github.com/aws/aws-sdk-go-v2/service/ecs v1.53.15

replace github.com/aws/aws-sdk-go-v2/service/ssm => github.com/aws/aws-sdk-go-v2/service/ssm v1.56.13

replace github.com/aws/smithy-go => github.com/aws/smithy-go v1.24.0

replace github.com/cenkalti/backoff/v4 => github.com/cenkalti/backoff/v4 v4.3.0

replace github.com/containous/alice => github.com/containous/alice v0.0.0-20181107144136-d83ebdd94cbd

replace github.com/coreos/go-systemd/v22 => github.com/coreos/go-systemd/v22 v22.5.0

replace github.com/docker/cli => github.com/docker/cli v29.2.1+incompatible

replace github.com/docker/docker => github.com/docker/docker v28.5.2+incompatible

replace github.com/docker/go-connections => github.com/docker/go-connections v0.6.0

replace github.com/fatih/structs => github.com/fatih/structs v1.1.0

replace github.com/fsnotify/fsnotify => github.com/fsnotify/fsnotify v1.9.0

replace github.com/go-acme/lego/v4 => github.com/go-acme/lego/v4 v4.33.0

replace github.com/go-kit/kit => github.com/go-kit/kit v0.13.0

replace github.com/go-kit/log => github.com/go-kit/log v0.2.1

replace github.com/golang/protobuf => github.com/golang/protobuf v1.5.4

replace github.com/google/go-github/v28 => github.com/google/go-github/v28 v28.1.1

replace github.com/gorilla/websocket => github.com/gorilla/websocket v1.5.4-0.20250319132907-e064f32e3674

replace github.com/hashicorp/consul/api => github.com/hashicorp/consul/api v1.26.1

replace github.com/hashicorp/go-hclog => github.com/hashicorp/go-hclog v1.6.3

replace github.com/hashicorp/go-retryablehttp => github.com/hashicorp/go-retryablehttp v0.7.8

replace github.com/hashicorp/go-version => github.com/hashicorp/go-version v1.8.0

replace github.com/hashicorp/nomad/api => github.com/hashicorp/nomad/api v0.0.0-20231213195942-64e3dca9274b

replace github.com/http-wasm/http-wasm-host-go => github.com/http-wasm/http-wasm-host-go v0.7.0

replace github.com/influxdata/influxdb-client-go/v2 => github.com/influxdata/influxdb-client-go/v2 v2.7.0

replace github.com/influxdata/influxdb1-client => github.com/influxdata/influxdb1-client v0.0.0-20200827194710-b269163b24ab

replace github.com/klauspost/compress => github.com/klauspost/compress v1.18.2

replace github.com/kvtools/consul => github.com/kvtools/consul v1.0.2

replace github.com/kvtools/etcdv3 => github.com/kvtools/etcdv3 v1.0.3

replace github.com/kvtools/redis => github.com/kvtools/redis v1.2.0

replace github.com/kvtools/valkeyrie => github.com/kvtools/valkeyrie v1.0.0

replace github.com/kvtools/zookeeper => github.com/kvtools/zookeeper v1.0.2

replace github.com/mailgun/ttlmap => github.com/mailgun/ttlmap v0.0.0-20170619185759-c1c17f74874f

replace github.com/miekg/dns => github.com/miekg/dns v1.1.72

replace github.com/mitchellh/copystructure => github.com/mitchellh/copystructure v1.2.0

replace github.com/mitchellh/hashstructure => github.com/mitchellh/hashstructure v1.0.0

replace github.com/mitchellh/mapstructure => github.com/mitchellh/mapstructure v1.5.1-0.20231216201459-8508981c8b6c

replace github.com/patrickmn/go-cache => github.com/patrickmn/go-cache v2.1.0+incompatible

replace github.com/pires/go-proxyproto => github.com/pires/go-proxyproto v0.8.1

replace github.com/pmezard/go-difflib => github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2

replace github.com/prometheus/client_golang => github.com/prometheus/client_golang v1.23.0

replace github.com/prometheus/client_model => github.com/prometheus/client_model v0.6.2

replace github.com/quic-go/quic-go => github.com/quic-go/quic-go v0.59.0

replace github.com/redis/go-redis/v9 => github.com/redis/go-redis/v9 v9.8.0

replace github.com/rs/zerolog => github.com/rs/zerolog v1.33.0

replace github.com/sirupsen/logrus => github.com/sirupsen/logrus v1.9.3

replace github.com/spiffe/go-spiffe/v2 => github.com/spiffe/go-spiffe/v2 v2.6.0

replace github.com/stealthrocket/wasi-go => github.com/stealthrocket/wasi-go v0.8.0

replace github.com/stealthrocket/wazergo => github.com/stealthrocket/wazergo v0.19.1

replace github.com/stretchr/testify => github.com/stretchr/testify v1.11.1

replace github.com/stvp/go-udp-testing => github.com/stvp/go-udp-testing v0.0.0-20201019212854-469649b16807

replace github.com/tailscale/tscert => github.com/tailscale/tscert v0.0.0-20230806124524-28a91b69a046

replace github.com/testcontainers/testcontainers-go => github.com/testcontainers/testcontainers-go v0.40.0

replace github.com/testcontainers/testcontainers-go/modules/k3s => github.com/testcontainers/testcontainers-go/modules/k3s v0.40.0

replace github.com/tetratelabs/wazero => github.com/tetratelabs/wazero v1.8.0

replace github.com/tidwall/gjson => github.com/tidwall/gjson v1.17.0

replace github.com/traefik/grpc-web => github.com/traefik/grpc-web v0.16.0

replace github.com/traefik/paerser => github.com/traefik/paerser v0.2.2

replace github.com/traefik/yaegi => github.com/traefik/yaegi v0.16.1

replace github.com/unrolled/render => github.com/unrolled/render v1.0.2

replace github.com/unrolled/secure => github.com/unrolled/secure v1.0.9

replace github.com/valyala/fasthttp => github.com/valyala/fasthttp v1.69.0

replace github.com/vulcand/oxy/v2 => github.com/vulcand/oxy/v2 v2.0.3

replace github.com/vulcand/predicate => github.com/vulcand/predicate v1.2.0

replace github.com/yuin/gopher-lua => github.com/yuin/gopher-lua v1.1.1

replace go.opentelemetry.io/collector/pdata => go.opentelemetry.io/collector/pdata v1.41.0

replace go.opentelemetry.io/contrib/bridges/otellogrus => go.opentelemetry.io/contrib/bridges/otellogrus v0.13.0

replace go.opentelemetry.io/contrib/propagators/autoprop => go.opentelemetry.io/contrib/propagators/autoprop v0.63.0

replace go.opentelemetry.io/otel => go.opentelemetry.io/otel v1.41.0

replace go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc => go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc v0.17.0

replace go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp => go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp v0.17.0

replace go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc => go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc v1.41.0

replace go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp => go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp v1.41.0

replace go.opentelemetry.io/otel/exporters/otlp/otlptrace => go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.41.0

replace go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc => go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.41.0

replace go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp => go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.41.0

replace go.opentelemetry.io/otel/log => go.opentelemetry.io/otel/log v0.17.0

replace go.opentelemetry.io/otel/metric => go.opentelemetry.io/otel/metric v1.41.0

replace go.opentelemetry.io/otel/sdk => go.opentelemetry.io/otel/sdk v1.41.0

replace go.opentelemetry.io/otel/sdk/log => go.opentelemetry.io/otel/sdk/log v0.17.0

replace go.opentelemetry.io/otel/sdk/metric => go.opentelemetry.io/otel/sdk/metric v1.41.0

replace go.opentelemetry.io/otel/trace => go.opentelemetry.io/otel/trace v1.41.0

replace golang.org/x/crypto => golang.org/x/crypto v0.48.0

replace golang.org/x/mod => golang.org/x/mod v0.32.0

replace golang.org/x/net => golang.org/x/net v0.51.0

replace golang.org/x/sync => golang.org/x/sync v0.19.0

replace golang.org/x/sys => golang.org/x/sys v0.41.0

replace golang.org/x/text => golang.org/x/text v0.34.0

replace golang.org/x/time => golang.org/x/time v0.14.0

replace golang.org/x/tools => golang.org/x/tools v0.41.0

replace google.golang.org/grpc => google.golang.org/grpc v1.79.3

replace gopkg.in/natefinch/lumberjack.v2 => gopkg.in/natefinch/lumberjack.v2 v2.2.1

replace gopkg.in/yaml.v3 => gopkg.in/yaml.v3 v3.0.1

replace k8s.io/api => k8s.io/api v0.34.3

replace k8s.io/apiextensions-apiserver => k8s.io/apiextensions-apiserver v0.34.3

replace k8s.io/apimachinery => k8s.io/apimachinery v0.34.3

replace k8s.io/client-go => k8s.io/client-go v0.34.3

replace k8s.io/utils => k8s.io/utils v0.0.0-20250820121507-0af2bda4dd1d

replace knative.dev/networking => knative.dev/networking v0.0.0-20241022012959-60e29ff520dc

replace knative.dev/pkg => knative.dev/pkg v0.0.0-20241021183759-9b9d535af5ad

replace mvdan.cc/xurls/v2 => mvdan.cc/xurls/v2 v2.5.0

replace sigs.k8s.io/controller-runtime => sigs.k8s.io/controller-runtime v0.22.1

replace sigs.k8s.io/gateway-api => sigs.k8s.io/gateway-api v1.4.0

replace sigs.k8s.io/structured-merge-diff/v6 => sigs.k8s.io/structured-merge-diff/v6 v6.3.1

replace sigs.k8s.io/yaml => sigs.k8s.io/yaml v1.6.0

replace cloud.google.com/go/auth => cloud.google.com/go/auth v0.18.1

replace cloud.google.com/go/auth/oauth2adapt => cloud.google.com/go/auth/oauth2adapt v0.2.8

replace cloud.google.com/go/compute/metadata => cloud.google.com/go/compute/metadata v0.9.0

replace dario.cat/mergo => dario.cat/mergo v1.0.2

replace github.com/AdamSLevy/jsonrpc2/v14 => github.com/AdamSLevy/jsonrpc2/v14 v14.1.0

replace github.com/Azure/azure-sdk-for-go => github.com/Azure/azure-sdk-for-go v68.0.0+incompatible

replace github.com/Azure/azure-sdk-for-go/sdk/azcore => github.com/Azure/azure-sdk-for-go/sdk/azcore v1.21.0

replace github.com/Azure/azure-sdk-for-go/sdk/azidentity => github.com/Azure/azure-sdk-for-go/sdk/azidentity v1.13.1

replace github.com/Azure/azure-sdk-for-go/sdk/internal => github.com/Azure/azure-sdk-for-go/sdk/internal v1.11.2

replace github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/dns/armdns => github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/dns/armdns v1.2.0

replace github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns => github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns v1.3.0

replace github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resourcegraph/armresourcegraph => github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resourcegraph/armresourcegraph v0.9.0

replace github.com/Azure/go-ansiterm => github.com/Azure/go-ansiterm v0.0.0-20250102033503-faa5f7b0171c

replace github.com/Azure/go-autorest => github.com/Azure/go-autorest v14.2.0+incompatible

replace github.com/Azure/go-autorest/autorest => github.com/Azure/go-autorest/autorest v0.11.30

replace github.com/Azure/go-autorest/autorest/adal => github.com/Azure/go-autorest/autorest/adal v0.9.22

replace github.com/Azure/go-autorest/autorest/azure/auth => github.com/Azure/go-autorest/autorest/azure/auth v0.5.13

replace github.com/Azure/go-autorest/autorest/azure/cli => github.com/Azure/go-autorest/autorest/azure/cli v0.4.6

replace github.com/Azure/go-autorest/autorest/date => github.com/Azure/go-autorest/autorest/date v0.3.0

replace github.com/Azure/go-autorest/autorest/to => github.com/Azure/go-autorest/autorest/to v0.4.1

replace github.com/Azure/go-autorest/logger => github.com/Azure/go-autorest/logger v0.2.1

replace github.com/Azure/go-autorest/tracing => github.com/Azure/go-autorest/tracing v0.6.0

replace github.com/AzureAD/microsoft-authentication-library-for-go => github.com/AzureAD/microsoft-authentication-library-for-go v1.6.0

replace github.com/HdrHistogram/hdrhistogram-go => github.com/HdrHistogram/hdrhistogram-go v1.1.2

replace github.com/Masterminds/goutils => github.com/Masterminds/goutils v1.1.1

replace github.com/Masterminds/semver/v3 => github.com/Masterminds/semver/v3 v3.3.1

replace github.com/Microsoft/go-winio => github.com/Microsoft/go-winio v0.6.2

replace github.com/VividCortex/gohistogram => github.com/VividCortex/gohistogram v1.0.0

replace github.com/akamai/AkamaiOPEN-edgegrid-golang/v11 => github.com/akamai/AkamaiOPEN-edgegrid-golang/v11 v11.1.0

replace github.com/alibabacloud-go/alibabacloud-gateway-spi => github.com/alibabacloud-go/alibabacloud-gateway-spi v0.0.5

replace github.com/alibabacloud-go/darabonba-openapi/v2 => github.com/alibabacloud-go/darabonba-openapi/v2 v2.1.15

replace github.com/alibabacloud-go/debug => github.com/alibabacloud-go/debug v1.0.1

replace github.com/alibabacloud-go/tea => github.com/alibabacloud-go/tea v1.4.0

replace github.com/alibabacloud-go/tea-utils/v2 => github.com/alibabacloud-go/tea-utils/v2 v2.0.7

replace github.com/aliyun/credentials-go => github.com/aliyun/credentials-go v1.4.7

replace github.com/armon/go-metrics => github.com/armon/go-metrics v0.4.1

replace github.com/aws/aws-sdk-go-v2/feature/ec2/imds => github.com/aws/aws-sdk-go-v2/feature/ec2/imds v1.18.17

replace github.com/aws/aws-sdk-go-v2/internal/configsources => github.com/aws/aws-sdk-go-v2/internal/configsources v1.4.17

replace github.com/aws/aws-sdk-go-v2/internal/endpoints/v2 => github.com/aws/aws-sdk-go-v2/internal/endpoints/v2 v2.7.17

replace github.com/aws/aws-sdk-go-v2/internal/ini => github.com/aws/aws-sdk-go-v2/internal/ini v1.8.4

replace github.com/aws/aws-sdk-go-v2/service/internal/accept-encoding => github.com/aws/aws-sdk-go-v2/service/internal/accept-encoding v1.13.4

replace github.com/aws/aws-sdk-go-v2/service/internal/presigned-url => github.com/aws/aws-sdk-go-v2/service/internal/presigned-url v1.13.17

replace github.com/aws/aws-sdk-go-v2/service/lightsail => github.com/aws/aws-sdk-go-v2/service/lightsail v1.50.11

replace github.com/aws/aws-sdk-go-v2/service/route53 => github.com/aws/aws-sdk-go-v2/service/route53 v1.62.1

replace github.com/aws/aws-sdk-go-v2/service/signin => github.com/aws/aws-sdk-go-v2/service/signin v1.0.5

replace github.com/aws/aws-sdk-go-v2/service/sso => github.com/aws/aws-sdk-go-v2/service/sso v1.30.9

replace github.com/aws/aws-sdk-go-v2/service/ssooidc => github.com/aws/aws-sdk-go-v2/service/ssooidc v1.35.14

replace github.com/aws/aws-sdk-go-v2/service/sts => github.com/aws/aws-sdk-go-v2/service/sts v1.41.6

replace github.com/aziontech/azionapi-go-sdk => github.com/aziontech/azionapi-go-sdk v0.144.0

replace github.com/baidubce/bce-sdk-go => github.com/baidubce/bce-sdk-go v0.9.260

replace github.com/benbjohnson/clock => github.com/benbjohnson/clock v1.3.5

replace github.com/beorn7/perks => github.com/beorn7/perks v1.0.1

replace github.com/blendle/zapdriver => github.com/blendle/zapdriver v1.3.1

replace github.com/boombuler/barcode => github.com/boombuler/barcode v1.0.1-0.20190219062509-6c824513bacc

replace github.com/bytedance/sonic => github.com/bytedance/sonic v1.12.0

replace github.com/cenkalti/backoff/v5 => github.com/cenkalti/backoff/v5 v5.0.3

replace github.com/cespare/xxhash/v2 => github.com/cespare/xxhash/v2 v2.3.0

replace github.com/clbanning/mxj/v2 => github.com/clbanning/mxj/v2 v2.7.0

replace github.com/containerd/errdefs => github.com/containerd/errdefs v1.0.0

replace github.com/containerd/errdefs/pkg => github.com/containerd/errdefs/pkg v0.3.0

replace github.com/containerd/log => github.com/containerd/log v0.1.0

replace github.com/containerd/platforms => github.com/containerd/platforms v1.0.0-rc.1

replace github.com/coreos/go-semver => github.com/coreos/go-semver v0.3.1

replace github.com/cpuguy83/dockercfg => github.com/cpuguy83/dockercfg v0.3.2

replace github.com/davecgh/go-spew => github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc

replace github.com/deepmap/oapi-codegen => github.com/deepmap/oapi-codegen v1.9.1

replace github.com/desertbit/timer => github.com/desertbit/timer v0.0.0-20180107155436-c41aec40b27f

replace github.com/dgryski/go-rendezvous => github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f

replace github.com/dimchansky/utfbom => github.com/dimchansky/utfbom v1.1.1

replace github.com/distribution/reference => github.com/distribution/reference v0.6.0

replace github.com/dnsimple/dnsimple-go/v4 => github.com/dnsimple/dnsimple-go/v4 v4.0.0

replace github.com/docker/go-units => github.com/docker/go-units v0.5.0

replace github.com/ebitengine/purego => github.com/ebitengine/purego v0.8.4

replace github.com/emicklei/go-restful/v3 => github.com/emicklei/go-restful/v3 v3.13.0

replace github.com/evanphx/json-patch/v5 => github.com/evanphx/json-patch/v5 v5.9.11

replace github.com/exoscale/egoscale/v3 => github.com/exoscale/egoscale/v3 v3.1.33

replace github.com/fatih/color => github.com/fatih/color v1.18.0

replace github.com/felixge/httpsnoop => github.com/felixge/httpsnoop v1.0.4

replace github.com/fxamacker/cbor/v2 => github.com/fxamacker/cbor/v2 v2.9.0

replace github.com/gabriel-vasile/mimetype => github.com/gabriel-vasile/mimetype v1.4.3

replace github.com/ghodss/yaml => github.com/ghodss/yaml v1.0.0

replace github.com/gin-gonic/gin => github.com/gin-gonic/gin v1.9.1

replace github.com/go-acme/alidns-20150109/v4 => github.com/go-acme/alidns-20150109/v4 v4.7.0

replace github.com/go-acme/esa-20240910/v2 => github.com/go-acme/esa-20240910/v2 v2.48.0

replace github.com/go-acme/jdcloud-sdk-go => github.com/go-acme/jdcloud-sdk-go v1.64.0

replace github.com/go-acme/tencentclouddnspod => github.com/go-acme/tencentclouddnspod v1.3.24

replace github.com/go-acme/tencentedgdeone => github.com/go-acme/tencentedgdeone v1.3.38

replace github.com/go-errors/errors => github.com/go-errors/errors v1.0.1

replace github.com/go-jose/go-jose/v4 => github.com/go-jose/go-jose/v4 v4.1.3

replace github.com/go-logfmt/logfmt => github.com/go-logfmt/logfmt v0.5.1

replace github.com/go-logr/logr => github.com/go-logr/logr v1.4.3

replace github.com/go-logr/stdr => github.com/go-logr/stdr v1.2.2

replace github.com/go-logr/zapr => github.com/go-logr/zapr v1.3.0

replace github.com/go-ole/go-ole => github.com/go-ole/go-ole v1.3.0

replace github.com/go-openapi/jsonpointer => github.com/go-openapi/jsonpointer v0.21.2

replace github.com/go-openapi/jsonreference => github.com/go-openapi/jsonreference v0.21.0

replace github.com/go-openapi/swag => github.com/go-openapi/swag v0.23.1

replace github.com/go-ozzo/ozzo-validation/v4 => github.com/go-ozzo/ozzo-validation/v4 v4.3.0

replace github.com/go-playground/locales => github.com/go-playground/locales v0.14.1

replace github.com/go-playground/universal-translator => github.com/go-playground/universal-translator v0.18.1

replace github.com/go-playground/validator/v10 => github.com/go-playground/validator/v10 v10.23.0

replace github.com/go-resty/resty/v2 => github.com/go-resty/resty/v2 v2.17.1

replace github.com/go-viper/mapstructure/v2 => github.com/go-viper/mapstructure/v2 v2.5.0

replace github.com/go-zookeeper/zk => github.com/go-zookeeper/zk v1.0.3

replace github.com/goccy/go-yaml => github.com/goccy/go-yaml v1.18.0

replace github.com/gofrs/flock => github.com/gofrs/flock v0.13.0

replace github.com/gofrs/uuid => github.com/gofrs/uuid v4.4.0+incompatible

replace github.com/gogo/protobuf => github.com/gogo/protobuf v1.3.2

replace github.com/golang-jwt/jwt/v4 => github.com/golang-jwt/jwt/v4 v4.5.2

replace github.com/golang-jwt/jwt/v5 => github.com/golang-jwt/jwt/v5 v5.3.0

replace github.com/golang/groupcache => github.com/golang/groupcache v0.0.0-20210331224755-41bb18bfe9da

replace github.com/google/gnostic-models => github.com/google/gnostic-models v0.7.0

replace github.com/google/go-cmp => github.com/google/go-cmp v0.7.0

replace github.com/google/go-querystring => github.com/google/go-querystring v1.2.0

replace github.com/google/pprof => github.com/google/pprof v0.0.0-20250403155104-27863c87afa6

replace github.com/google/s2a-go => github.com/google/s2a-go v0.1.9

replace github.com/google/uuid => github.com/google/uuid v1.6.0

replace github.com/googleapis/enterprise-certificate-proxy => github.com/googleapis/enterprise-certificate-proxy v0.3.11

replace github.com/googleapis/gax-go/v2 => github.com/googleapis/gax-go/v2 v2.17.0

replace github.com/gophercloud/gophercloud => github.com/gophercloud/gophercloud v1.14.1

replace github.com/gophercloud/utils => github.com/gophercloud/utils v0.0.0-20231010081019-80377eca5d56

replace github.com/gravitational/trace => github.com/gravitational/trace v1.1.16-0.20220114165159-14a9a7dd6aaf

replace github.com/grpc-ecosystem/grpc-gateway/v2 => github.com/grpc-ecosystem/grpc-gateway/v2 v2.28.0

replace github.com/hashicorp/cronexpr => github.com/hashicorp/cronexpr v1.1.2

replace github.com/hashicorp/errwrap => github.com/hashicorp/errwrap v1.1.0

replace github.com/hashicorp/go-cleanhttp => github.com/hashicorp/go-cleanhttp v0.5.2

replace github.com/hashicorp/go-immutable-radix => github.com/hashicorp/go-immutable-radix v1.3.1

replace github.com/hashicorp/go-multierror => github.com/hashicorp/go-multierror v1.1.1

replace github.com/hashicorp/go-rootcerts => github.com/hashicorp/go-rootcerts v1.0.2

replace github.com/hashicorp/go-sockaddr => github.com/hashicorp/go-sockaddr v1.0.7

replace github.com/hashicorp/go-uuid => github.com/hashicorp/go-uuid v1.0.3

replace github.com/hashicorp/golang-lru => github.com/hashicorp/golang-lru v1.0.2

replace github.com/hashicorp/hcl => github.com/hashicorp/hcl v1.0.1-vault-5

replace github.com/hashicorp/serf => github.com/hashicorp/serf v0.10.1

replace github.com/huandu/xstrings => github.com/huandu/xstrings v1.5.0

replace github.com/huaweicloud/huaweicloud-sdk-go-v3 => github.com/huaweicloud/huaweicloud-sdk-go-v3 v0.1.187

replace github.com/iij/doapi => github.com/iij/doapi v0.0.0-20190504054126-0bbf12d6d7df

replace github.com/imdario/mergo => github.com/imdario/mergo v0.3.16

replace github.com/influxdata/line-protocol => github.com/influxdata/line-protocol v0.0.0-20200327222509-2487e7298839

replace github.com/infobloxopen/infoblox-go-client/v2 => github.com/infobloxopen/infoblox-go-client/v2 v2.10.0

replace github.com/jonboulle/clockwork => github.com/jonboulle/clockwork v0.5.0

replace github.com/josharian/intern => github.com/josharian/intern v1.0.0

replace github.com/json-iterator/go => github.com/json-iterator/go v1.1.13-0.20220915233716-71ac16282d12

replace github.com/k0kubun/go-ansi => github.com/k0kubun/go-ansi v0.0.0-20180517002512-3bf9e2903213

replace github.com/klauspost/cpuid/v2 => github.com/klauspost/cpuid/v2 v2.2.5

replace github.com/kolo/xmlrpc => github.com/kolo/xmlrpc v0.0.0-20220921171641-a4b6fa1dd06b

replace github.com/kylelemons/godebug => github.com/kylelemons/godebug v1.1.0

replace github.com/labbsr0x/bindman-dns-webhook => github.com/labbsr0x/bindman-dns-webhook v1.0.2

replace github.com/labbsr0x/goh => github.com/labbsr0x/goh v1.0.1

replace github.com/leodido/go-urn => github.com/leodido/go-urn v1.4.0

replace github.com/linode/linodego => github.com/linode/linodego v1.65.0

replace github.com/liquidweb/liquidweb-cli => github.com/liquidweb/liquidweb-cli v0.6.9

replace github.com/liquidweb/liquidweb-go => github.com/liquidweb/liquidweb-go v1.6.4

replace github.com/lufia/plan9stats => github.com/lufia/plan9stats v0.0.0-20250317134145-8bc96cf8fc35

replace github.com/magiconair/properties => github.com/magiconair/properties v1.8.10

replace github.com/mailgun/multibuf => github.com/mailgun/multibuf v0.1.2

replace github.com/mailgun/timetools => github.com/mailgun/timetools v0.0.0-20141028012446-7e6055773c51

replace github.com/mailru/easyjson => github.com/mailru/easyjson v0.9.0

replace github.com/mattn/go-colorable => github.com/mattn/go-colorable v0.1.14

replace github.com/mattn/go-isatty => github.com/mattn/go-isatty v0.0.20

replace github.com/mimuret/golang-iij-dpf => github.com/mimuret/golang-iij-dpf v0.9.1

replace github.com/mitchellh/go-homedir => github.com/mitchellh/go-homedir v1.1.0

replace github.com/mitchellh/go-ps => github.com/mitchellh/go-ps v1.0.0

replace github.com/mitchellh/reflectwalk => github.com/mitchellh/reflectwalk v1.0.2

replace github.com/moby/docker-image-spec => github.com/moby/docker-image-spec v1.3.1

replace github.com/moby/go-archive => github.com/moby/go-archive v0.1.0

replace github.com/moby/patternmatcher => github.com/moby/patternmatcher v0.6.0

replace github.com/moby/spdystream => github.com/moby/spdystream v0.5.0

replace github.com/moby/sys/sequential => github.com/moby/sys/sequential v0.6.0

replace github.com/moby/sys/user => github.com/moby/sys/user v0.4.0

replace github.com/moby/sys/userns => github.com/moby/sys/userns v0.1.0

replace github.com/moby/term => github.com/moby/term v0.5.2

replace github.com/modern-go/concurrent => github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd

replace github.com/modern-go/reflect2 => github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee

replace github.com/morikuni/aec => github.com/morikuni/aec v1.0.0

replace github.com/munnerz/goautoneg => github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822

replace github.com/mxk/go-flowrate => github.com/mxk/go-flowrate v0.0.0-20140419014527-cca7078d478f

replace github.com/namedotcom/go/v4 => github.com/namedotcom/go/v4 v4.0.2

replace github.com/nrdcg/auroradns => github.com/nrdcg/auroradns v1.2.0

replace github.com/nrdcg/bunny-go => github.com/nrdcg/bunny-go v0.1.0

replace github.com/nrdcg/desec => github.com/nrdcg/desec v0.11.1

replace github.com/nrdcg/dnspod-go => github.com/nrdcg/dnspod-go v0.4.0

replace github.com/nrdcg/freemyip => github.com/nrdcg/freemyip v0.3.0

replace github.com/nrdcg/goacmedns => github.com/nrdcg/goacmedns v0.2.0

replace github.com/nrdcg/goinwx => github.com/nrdcg/goinwx v0.12.0

replace github.com/nrdcg/mailinabox => github.com/nrdcg/mailinabox v0.3.0

replace github.com/nrdcg/namesilo => github.com/nrdcg/namesilo v0.5.0

replace github.com/nrdcg/nodion => github.com/nrdcg/nodion v0.1.0

replace github.com/nrdcg/oci-go-sdk/common/v1065 => github.com/nrdcg/oci-go-sdk/common/v1065 v1065.108.2

replace github.com/nrdcg/oci-go-sdk/dns/v1065 => github.com/nrdcg/oci-go-sdk/dns/v1065 v1065.108.2

replace github.com/nrdcg/porkbun => github.com/nrdcg/porkbun v0.4.0

replace github.com/nrdcg/vegadns => github.com/nrdcg/vegadns v0.3.0

replace github.com/nzdjb/go-metaname => github.com/nzdjb/go-metaname v1.0.0

replace github.com/onsi/ginkgo => github.com/onsi/ginkgo v1.16.5

replace github.com/opencontainers/go-digest => github.com/opencontainers/go-digest v1.0.0

replace github.com/opencontainers/image-spec => github.com/opencontainers/image-spec v1.1.1

replace github.com/openzipkin/zipkin-go => github.com/openzipkin/zipkin-go v0.4.3

replace github.com/ovh/go-ovh => github.com/ovh/go-ovh v1.9.0

replace github.com/pelletier/go-toml/v2 => github.com/pelletier/go-toml/v2 v2.2.4

replace github.com/peterhellberg/link => github.com/peterhellberg/link v1.2.0

replace github.com/pkg/browser => github.com/pkg/browser v0.0.0-20240102092130-5ac0b6a4141c

replace github.com/pkg/errors => github.com/pkg/errors v0.9.1

replace github.com/power-devops/perfstat => github.com/power-devops/perfstat v0.0.0-20240221224432-82ca36839d55

replace github.com/pquerna/otp => github.com/pquerna/otp v1.5.0

replace github.com/prometheus/common => github.com/prometheus/common v0.65.0

replace github.com/prometheus/procfs => github.com/prometheus/procfs v0.17.0

replace github.com/quic-go/qpack => github.com/quic-go/qpack v0.6.0

replace github.com/regfish/regfish-dnsapi-go => github.com/regfish/regfish-dnsapi-go v0.1.1

replace github.com/rs/cors => github.com/rs/cors v1.7.0

replace github.com/rs/dnscache => github.com/rs/dnscache v0.0.0-20230804202142-fc85eb664529

replace github.com/sacloud/api-client-go => github.com/sacloud/api-client-go v0.3.3

replace github.com/sacloud/go-http => github.com/sacloud/go-http v0.1.9

replace github.com/sacloud/iaas-api-go => github.com/sacloud/iaas-api-go v1.23.1

replace github.com/sacloud/packages-go => github.com/sacloud/packages-go v0.0.12

replace github.com/sagikazarmark/locafero => github.com/sagikazarmark/locafero v0.4.0

replace github.com/sagikazarmark/slog-shim => github.com/sagikazarmark/slog-shim v0.1.0

replace github.com/scaleway/scaleway-sdk-go => github.com/scaleway/scaleway-sdk-go v1.0.0-beta.36

replace github.com/selectel/domains-go => github.com/selectel/domains-go v1.1.0

replace github.com/selectel/go-selvpcclient/v4 => github.com/selectel/go-selvpcclient/v4 v4.1.0

replace github.com/shirou/gopsutil/v4 => github.com/shirou/gopsutil/v4 v4.25.6

replace github.com/shopspring/decimal => github.com/shopspring/decimal v1.4.0

replace github.com/softlayer/softlayer-go => github.com/softlayer/softlayer-go v1.2.1

replace github.com/softlayer/xmlrpc => github.com/softlayer/xmlrpc v0.0.0-20200409220501-5f089df7cb7e

replace github.com/sony/gobreaker => github.com/sony/gobreaker v1.0.0

replace github.com/sourcegraph/conc => github.com/sourcegraph/conc v0.3.0

replace github.com/spf13/afero => github.com/spf13/afero v1.11.0

replace github.com/spf13/cast => github.com/spf13/cast v1.7.0

replace github.com/spf13/pflag => github.com/spf13/pflag v1.0.7

replace github.com/spf13/viper => github.com/spf13/viper v1.18.2

replace github.com/stretchr/objx => github.com/stretchr/objx v0.5.2

replace github.com/subosito/gotenv => github.com/subosito/gotenv v1.6.0

replace github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common => github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common v1.3.48

replace github.com/tidwall/match => github.com/tidwall/match v1.1.1

replace github.com/tidwall/pretty => github.com/tidwall/pretty v1.2.1

replace github.com/tjfoc/gmsm => github.com/tjfoc/gmsm v1.4.1

replace github.com/tklauser/go-sysconf => github.com/tklauser/go-sysconf v0.3.15

replace github.com/tklauser/numcpus => github.com/tklauser/numcpus v0.10.0

replace github.com/transip/gotransip/v6 => github.com/transip/gotransip/v6 v6.26.1

replace github.com/ultradns/ultradns-go-sdk => github.com/ultradns/ultradns-go-sdk v1.8.1-20250722213956-faef419

replace github.com/valyala/bytebufferpool => github.com/valyala/bytebufferpool v1.0.0

replace github.com/vinyldns/go-vinyldns => github.com/vinyldns/go-vinyldns v0.9.17

replace github.com/volcengine/volc-sdk-golang => github.com/volcengine/volc-sdk-golang v1.0.237

replace github.com/vultr/govultr/v3 => github.com/vultr/govultr/v3 v3.27.0

replace github.com/x448/float16 => github.com/x448/float16 v0.8.4

replace github.com/yandex-cloud/go-genproto => github.com/yandex-cloud/go-genproto v0.54.0

replace github.com/yandex-cloud/go-sdk/services/dns => github.com/yandex-cloud/go-sdk/services/dns v0.0.36

replace github.com/yandex-cloud/go-sdk/v2 => github.com/yandex-cloud/go-sdk/v2 v2.56.0

replace github.com/youmark/pkcs8 => github.com/youmark/pkcs8 v0.0.0-20240726163527-a2c0da244d78

replace github.com/yusufpapurcu/wmi => github.com/yusufpapurcu/wmi v1.2.4

replace go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 v3.6.4

replace go.etcd.io/etcd/client/pkg/v3 => go.etcd.io/etcd/client/pkg/v3 v3.6.4

replace go.etcd.io/etcd/client/v3 => go.etcd.io/etcd/client/v3 v3.6.4

replace go.mongodb.org/mongo-driver => go.mongodb.org/mongo-driver v1.13.1

replace go.opencensus.io => go.opencensus.io v0.24.0

replace go.opentelemetry.io/auto/sdk => go.opentelemetry.io/auto/sdk v1.2.1

replace go.opentelemetry.io/collector/featuregate => go.opentelemetry.io/collector/featuregate v1.41.0

replace go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp => go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.61.0

replace go.opentelemetry.io/contrib/propagators/aws => go.opentelemetry.io/contrib/propagators/aws v1.38.0

replace go.opentelemetry.io/contrib/propagators/b3 => go.opentelemetry.io/contrib/propagators/b3 v1.38.0

replace go.opentelemetry.io/contrib/propagators/jaeger => go.opentelemetry.io/contrib/propagators/jaeger v1.38.0

replace go.opentelemetry.io/contrib/propagators/ot => go.opentelemetry.io/contrib/propagators/ot v1.38.0

replace go.opentelemetry.io/proto/otlp => go.opentelemetry.io/proto/otlp v1.9.0

replace go.uber.org/atomic => go.uber.org/atomic v1.11.0

replace go.uber.org/multierr => go.uber.org/multierr v1.11.0

replace go.uber.org/ratelimit => go.uber.org/ratelimit v0.3.1

replace go.uber.org/zap => go.uber.org/zap v1.27.0

replace go.yaml.in/yaml/v2 => go.yaml.in/yaml/v2 v2.4.2

replace go.yaml.in/yaml/v3 => go.yaml.in/yaml/v3 v3.0.4

replace golang.org/x/arch => golang.org/x/arch v0.4.0

replace golang.org/x/exp => golang.org/x/exp v0.0.0-20250408133849-7e4ce0ab07d0

replace golang.org/x/oauth2 => golang.org/x/oauth2 v0.35.0

replace golang.org/x/term => golang.org/x/term v0.40.0

replace gomodules.xyz/jsonpatch/v2 => gomodules.xyz/jsonpatch/v2 v2.4.0

replace google.golang.org/api => google.golang.org/api v0.267.0

replace google.golang.org/genproto/googleapis/api => google.golang.org/genproto/googleapis/api v0.0.0-20260209200024-4cfbd4190f57

replace google.golang.org/genproto/googleapis/rpc => google.golang.org/genproto/googleapis/rpc v0.0.0-20260209200024-4cfbd4190f57

replace google.golang.org/protobuf => google.golang.org/protobuf v1.36.11

replace gopkg.in/evanphx/json-patch.v4 => gopkg.in/evanphx/json-patch.v4 v4.13.0

replace gopkg.in/inf.v0 => gopkg.in/inf.v0 v0.9.1

replace gopkg.in/ini.v1 => gopkg.in/ini.v1 v1.67.1

replace gopkg.in/ns1/ns1-go.v2 => gopkg.in/ns1/ns1-go.v2 v2.17.2

replace gopkg.in/yaml.v2 => gopkg.in/yaml.v2 v2.4.0

replace k8s.io/klog/v2 => k8s.io/klog/v2 v2.130.1

replace k8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20250814151709-d7b6acb124c3

replace nhooyr.io/websocket => nhooyr.io/websocket v1.8.7

replace sigs.k8s.io/json => sigs.k8s.io/json v0.0.0-20250730193827-2d320260d730

replace sigs.k8s.io/randfill => sigs.k8s.io/randfill v1.0.0
