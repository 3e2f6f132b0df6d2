-- Takes (or corrects) charges against one tenant's rate limits, all or none: the GCRA of Gcra.java, the same
-- arithmetic. Each key holds one limit's theoretical arrival time (TAT, microseconds since the epoch) and expires
-- a grace period after it passes, so an idle tenant keeps nothing. Every key carries the tenant's hash tag: one
-- Cluster slot. Time is the caller's (its injected clock), not Redis TIME, so tests can move it; Redis expires keys
-- by its own clock, hence the grace: a TAT kept past its time is the same as none (the max with now below), one
-- dropped early while the caller's clock has not reached it would let a tenant past its limit.
-- KEYS[i] one limit of the tenant
-- ARGV[1] now (µs)  ARGV[2] 'take' (refused when a limit would be exceeded) or 'adjust' (never refused)
-- ARGV[3] grace (ms) a key outlives its TAT by
-- ARGV[3i+1], ARGV[3i+2], ARGV[3i+3] for KEYS[i]: emission interval (µs per unit), burst (units), cost (units)
-- Answers {'OK'} or {'LIMITED', index of the limit that waits longest, its wait in µs}.
local now = tonumber(ARGV[1])
local take = ARGV[2] == 'take'
local grace_ms = tonumber(ARGV[3])
local tats = {}
local longest = 0
local refusing = 0
for i = 1, #KEYS do
  local interval = tonumber(ARGV[3 * i + 1])
  local burst = tonumber(ARGV[3 * i + 2])
  local cost = tonumber(ARGV[3 * i + 3])
  local tat = math.max(tonumber(redis.call('GET', KEYS[i]) or '0'), now) + cost * interval
  tat = math.max(tat, now)
  if take then
    local over = tat - now - math.max(burst, cost) * interval
    if over > 0 and math.ceil(over) > longest then
      longest = math.ceil(over)
      refusing = i
    end
  end
  tats[i] = tat
end
if refusing > 0 then
  return {'LIMITED', refusing, string.format('%.0f', longest)}
end
for i = 1, #KEYS do
  local ttl_ms = math.ceil((tats[i] - now) / 1000)
  if ttl_ms > 0 then
    redis.call('SET', KEYS[i], string.format('%.17g', tats[i]), 'PX', ttl_ms + grace_ms)
  else
    redis.call('DEL', KEYS[i])
  end
end
return {'OK'}
