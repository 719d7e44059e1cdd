function [idx, centers] = mykmeans(data, k, maxiter)
% Test harness stand-in for the authors' MEX k-means (mykmeans.cpp): returns the injected
% partition centres (d x k) instead of clustering, so that meka.m runs on a partition chosen
% by the test. Labels of the clustered sample are not used by meka.m.
global MEKA_INJECT
centers = MEKA_INJECT.centers;
if size(centers, 1) ~= size(data, 1) || size(centers, 2) ~= k
  error('harness: injected centres are %dx%d, meka.m asked for %dx%d', ...
        size(centers, 1), size(centers, 2), size(data, 1), k);
end
idx = ones(size(data, 2), 1);
end
