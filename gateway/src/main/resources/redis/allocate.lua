-- reserve.lua and create.lua in one step, where one Redis holds both the tenant's keys and the session's (never on a
-- Cluster: the two live in different slots). Answers as reserve.lua does when the key is held or the quota is full,
-- else as create.lua does ('EXISTING_RECORD' for its 'EXISTING').
-- KEYS[1] idempotency key  KEYS[2] tenant live index  KEYS[3] session  KEYS[4] bucket due index
-- KEYS[5] bucket state counts
-- ARGV[1..7] as reserve.lua (ARGV[1] session id, ARGV[6] lease expiry ms)  ARGV[8..] field, value pairs
local reserved = reserve_key(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
if reserved[1] ~= 'RESERVED' then
  return reserved
end
local made = create_record(KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[6], 8)
if made[1] == 'EXISTING' then
  -- told apart from a held key's EXISTING: here it is the record already stored under this id, with its fields
  made[1] = 'EXISTING_RECORD'
end
return made
