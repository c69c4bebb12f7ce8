-- sliding_log: a request of cost n is admitted when the cost admitted in
-- (now - W, now] plus n is at most limit. ARGV[1] limit, ARGV[2] window
-- (µs). KEYS[1] is the log, a sorted set of admitted requests (score = time
-- in µs, member = "seq:cost"); KEYS[2] a hash: used = the cost in the log,
-- seq = the last member's number. The log never holds more than limit
-- members, as every member costs at least 1: memory is O(limit).
local limit, W = tonumber(ARGV[1]), tonumber(ARGV[2])
local log, meta = KEYS[1], KEYS[2]
local function costOf(member) return tonumber(string.match(member, ':(%d+)$')) end
local lag = 0
local newest = redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')
local last = nil
if newest[2] then
  last = tonumber(newest[2])
  if now < last then lag, now = last - now, last end
end
-- Entries at or before now - W have left the window.
local used = tonumber(redis.call('HGET', meta, 'used') or '0')
local gone = redis.call('ZRANGEBYSCORE', log, '-inf', num(now - W))
for _, m in ipairs(gone) do used = used - costOf(m) end
if #gone > 0 and not dry then
  redis.call('ZREMRANGEBYSCORE', log, '-inf', num(now - W))
  redis.call('HSET', meta, 'used', num(used))
end
local reset = 0
if last and last > now - W then reset = lag + last + W - now end
if cost <= 0 then return {1, limit - used, 0, reset, 0} end
if cost > limit then return {0, limit - used, NEVER, reset, 0} end
if used + cost > limit then
  -- It passes once the oldest entries holding need units have left.
  local need = used + cost - limit
  local entries = redis.call('ZRANGEBYSCORE', log, '(' .. num(now - W), '+inf', 'WITHSCORES')
  local sum = 0
  for i = 1, #entries, 2 do
    sum = sum + costOf(entries[i])
    if sum >= need then
      return {0, limit - used, lag + tonumber(entries[i + 1]) + W - now, reset, 0}
    end
  end
  return redis.error_reply('sliding_log: inconsistent log')
end
if not dry then
  local seq = redis.call('HINCRBY', meta, 'seq', 1)
  redis.call('ZADD', log, num(now), seq .. ':' .. string.format('%d', cost))
  redis.call('HSET', meta, 'used', num(used + cost))
  keep({log, meta}, lag + W)
end
return {1, limit - used - cost, 0, lag + W, 0}
