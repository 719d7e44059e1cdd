function y = randsample(pop, k)
% Test harness stand-in for randsample: returns the next injected draw (1-based positions into
% pop), after checking that meka.m asks for a draw of the expected size from the expected range.
global MEKA_INJECT
MEKA_INJECT.rs_next = MEKA_INJECT.rs_next + 1;
i = MEKA_INJECT.rs_next;
if i > numel(MEKA_INJECT.randsample)
  error('harness: meka.m asked for randsample draw %d; only %d injected', i, numel(MEKA_INJECT.randsample));
end
pos = double(MEKA_INJECT.randsample{i}(:)');
if numel(pos) ~= k || max(pos) > numel(pop)
  error('harness: randsample draw %d: meka.m asked for %d of %d, injected %d (max %d)', ...
        i, k, numel(pop), numel(pos), max(pos));
end
y = pop(pos);
end
