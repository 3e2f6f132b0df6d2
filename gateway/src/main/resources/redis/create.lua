-- Create a session record and index it at its lease expiry, unless it exists already (an idempotent retry).
-- KEYS[1] session  KEYS[2] bucket due index  KEYS[3] bucket state counts
-- ARGV[1] lease expiry ms  ARGV[2] session id  ARGV[3..] field, value pairs
return create_record(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[1], 3)
