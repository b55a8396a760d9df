package proto

// Version is the protocol version this package speaks. A hello naming another version
// is refused with ErrUnsupportedVersion.
const Version = 1

// Limits of the wire. Each is checked by the decoder before anything is stored; an
// input over a limit is a typed error (ErrLineTooLong or ErrOutOfRange) and changes
// nothing. The run, key and result limits equal core.DefaultLimits() (a test holds them
// together): the wire never accepts what the default core would refuse for size.
const (
	// LineBytesMax is the longest request line in bytes, excluding its LF or CRLF.
	LineBytesMax = 64 << 10
	// AnswerLineBytesMax is the longest answer line a client of this package reads. The
	// protocol sets no limit on answers (an escaped result, a status listing every
	// pending key); this bound, far above the longest answer the default limits allow
	// (a status of 1,024 pending keys of 256 bytes, each byte escaped, about 1.6 MB),
	// only keeps a broken peer from growing a client's memory without end.
	AnswerLineBytesMax = 16 << 20
	// RunBytesMax is the longest run id in bytes (after JSON unescaping).
	RunBytesMax = 128
	// KeyBytesMax is the longest idempotency key in bytes (after JSON unescaping).
	KeyBytesMax = 256
	// ResultBytesMax is the longest result of a completed effect in bytes.
	ResultBytesMax = 16 << 10
	// TokenBytesMax is the longest credential in a hello, in bytes.
	TokenBytesMax = 512
	// IDBytesMax is the longest string request id in bytes.
	IDBytesMax = 64
	// IntMax is the largest integer the wire carries (2^53-1, exact in every JSON
	// implementation): the bound of integer ids, epochs and versions.
	IntMax = 1<<53 - 1
	// WaitMsMax is the longest wait an admit may ask for, in milliseconds (5 minutes).
	WaitMsMax = 5 * 60 * 1000
	// TimeoutMsMax is the longest run timeout an open may set, in milliseconds (30 days).
	TimeoutMsMax = 30 * 24 * 60 * 60 * 1000
	// DepthMax is the deepest nesting of JSON arrays and objects the decoder reads (a
	// request needs 2); a deeper line is a parse error, so that decoding has bounded
	// memory and time.
	DepthMax = 32
	// NameBytesMax bounds how much of an offending member or method name an error
	// repeats (DecodeError.Field).
	NameBytesMax = 64
	// DescriptionBytesMax is the longest description of an admit, in bytes
	// (core.DescriptionBytesMax).
	DescriptionBytesMax = 512
	// ReasonBytesMax is the longest reason of a decide, in bytes (core.ReasonBytesMax).
	ReasonBytesMax = 512
	// ArgsDigestBytesMax is the longest args digest ("sha512:" and 128 hex digits).
	ArgsDigestBytesMax = 135
	// PendingLimitDefault is how many approvals a pending request lists without a limit.
	PendingLimitDefault = 100
	// PendingLimitMax is the most approvals one pending request lists; an answer is
	// also cut to fit in LineBytesMax (the page then says more).
	PendingLimitMax = 1000
	// CursorBytesMax is the longest cursor of a pending request.
	CursorBytesMax = 1024
)
