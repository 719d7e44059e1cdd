function y = randsample(pop, k)
% MATLAB Statistics Toolbox randsample(population, k): k values drawn uniformly without replacement
% (the Octave core has no randsample).
if isscalar(pop), pop = 1:pop; end
p = randperm(numel(pop));
y = pop(p(1:k));
end
